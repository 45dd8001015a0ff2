public import GRDB
internal import Synchronization

/// Write transactions that arrive together share one commit (group commit): each commit with `synchronous=FULL`
/// costs an fsync, and concurrent writers should pay for one, not one each.
///
/// The guarantee is the same as `ReplicaStore.write`: `write` returns only after the transaction holding its work
/// committed (durably, on the replica's FULL writer); if the work throws, its own changes are rolled back and the
/// error is thrown to its caller alone — the other writers of the batch are not affected (each runs in a savepoint;
/// a work alone in its commit needs none). Works are applied in arrival order.
///
/// ```swift
/// // 20 clients calling this at once: a few commits, not 20.
/// let seq = try await store.groupCommit.write { db in try insertChange(db) }
/// ```
///
/// How: a writer that finds no commit in progress starts one with everything queued so far; from then on the
/// database's writer drives itself: when a commit ends it takes everything queued meanwhile and starts the next
/// commit before it answers the callers of the one that ended. So the writer never waits for a caller's thread to
/// be scheduled between two commits (on a busy daemon those threads are serving the other connections), nobody
/// waits on a timer, and a lone writer commits at once.
///
/// A batch can also be *reported* (`reportBatches`): a batch holding a `write(reporting: true)` reads something
/// after its works, in its own transaction — the state its commit makes — and the reading is handed on once the
/// batch committed, before any of its callers is answered (by the first of them to resume; the others wait for
/// it). One read and one hand-off per commit, however many writes share it (the engine publishes the outbox
/// counts so). Readings of batches that follow each other closely may be handed on out of commit order: each
/// says what its own commit made, and a reader that cares orders them by what they read (the engine's counts
/// carry their generation).
public final class GroupCommit: Sendable {
    private let writer: any DatabaseWriter
    private let gate: WriteGate
    private let state = Mutex(State())
    private let report = Mutex<BatchReport?>(nil)

    /// A batch's reading, and what receives it once the batch committed (type-erased; see `reportBatches`).
    private struct BatchReport: Sendable {
        let read: @Sendable (Database) throws -> any Sendable
        let committed: @Sendable (any Sendable) async -> Void
    }

    private struct State {
        var queue: [Slot] = []
        var committing = false
    }

    init(writer: any DatabaseWriter, gate: WriteGate) {
        self.writer = writer
        self.gate = gate
    }

    /// From now on, each batch holding a `write(reporting: true)` runs `read` after its works, in its transaction,
    /// and passes the reading to `committed` once that transaction committed, before its callers are answered. A
    /// failed read or commit hands nothing on. Replaces any earlier report.
    public func reportBatches<Reading: Sendable>(
        read: @escaping @Sendable (Database) throws -> Reading, committed: @escaping @Sendable (Reading) async -> Void
    ) {
        report.withLock { report in
            report = BatchReport(
                read: { db in try read(db) },
                committed: { reading in
                    // Only `read` makes readings: the cast cannot fail.
                    await committed(reading as! Reading)
                })
        }
    }

    /// Writes queued for the next commit (while one is being committed).
    public var queuedWrites: Int {
        state.withLock { $0.committing ? $0.queue.count : 0 }
    }

    /// Runs `work` in a transaction shared with concurrent callers; returns once that transaction committed (and,
    /// `reporting`, once the batch's reading was handed on: see `reportBatches`).
    public func write<T: Sendable>(
        reporting: Bool = false, _ work: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try gate.check()
        let slot = Slot(reports: reporting) { db in try work(db) }
        let starts = state.withLock { state in
            state.queue.append(slot)
            guard !state.committing else { return false }
            state.committing = true
            return true
        }
        if starts { commitQueued() }
        let (result, reading) = await slot.outcome()
        if let reading { await reading.handOn() }
        return try Self.cast(result)
    }

    /// Commits everything queued in one transaction on the writer; when it ends, starts the next commit if writes
    /// queued meanwhile, then answers this batch's callers.
    private func commitQueued() {
        let batch = state.withLock { state in
            defer { state.queue.removeAll() }
            return state.queue
        }
        let report = batch.contains(where: \.reports) ? report.withLock { $0 } : nil
        // `asyncWrite`, not the async `write`: GRDB interrupts the database access of a cancelled task, and no
        // caller's cancellation (its client went away) may undo the others' changes.
        writer.asyncWrite(
            { db in
                // On the writer: a purge that ended writes before this batch ran did not count it.
                try self.gate.check()
                return (try Self.apply(batch, db), report.flatMap { try? $0.read(db) })
            },
            completion: { _, outcome in
                // On the writer, right after the commit: the next batch goes first, queued behind this block on the
                // writer's serial queue, so it starts without a thread hop.
                let more = self.state.withLock { state in
                    if state.queue.isEmpty { state.committing = false }
                    return state.committing
                }
                if more { self.commitQueued() }
                let results: [Result<any Sendable, any Error>]
                var reading: ReadingHandOff?
                switch outcome {
                case .success(let (applied, read)):
                    results = applied
                    if let report, let read { reading = ReadingHandOff(read, to: report.committed) }
                case .failure(let error):
                    // The commit failed, or a lone work threw: nothing of the batch is on disk, and there is nothing to
                    // report.
                    results = Array(repeating: .failure(error), count: batch.count)
                }
                for (slot, result) in zip(batch, results) { slot.resume(result, reading: reading) }
            })
    }

    /// Each work in its own savepoint (`WorkSavepoint`), in arrival order: one that throws is rolled back alone. A
    /// lone work (every call from a single client) needs none: its error is thrown, and the transaction, only its
    /// own, rolled back — two statements fewer to run for each such call.
    private static func apply(_ batch: [Slot], _ db: Database) throws -> [Result<any Sendable, any Error>] {
        if batch.count == 1 { return [.success(try batch[0].work(db))] }
        return batch.map { slot in
            Result { try WorkSavepoint.run(db) { try slot.work(db) } }
        }
    }

    private static func cast<T>(_ result: Result<any Sendable, any Error>) throws -> T {
        // Each slot's work returns its caller's T: the cast cannot fail.
        try result.get() as! T
    }

    /// A committed batch's reading, handed on once, by the first of its callers to get there; the others wait for
    /// it, so that none is answered before it was handed on.
    private final class ReadingHandOff: Sendable {
        private enum Stage {
            case waiting(any Sendable)
            case handingOn([CheckedContinuation<Void, Never>])
            case handedOn
        }

        private let stage: Mutex<Stage>
        private let committed: @Sendable (any Sendable) async -> Void

        init(_ reading: any Sendable, to committed: @escaping @Sendable (any Sendable) async -> Void) {
            stage = Mutex(.waiting(reading))
            self.committed = committed
        }

        func handOn() async {
            let mine: (any Sendable)? = stage.withLock { stage in
                guard case .waiting(let reading) = stage else { return nil }
                stage = .handingOn([])
                return reading
            }
            if let mine {
                await committed(mine)
                let waiters = stage.withLock { stage -> [CheckedContinuation<Void, Never>] in
                    defer { stage = .handedOn }
                    if case .handingOn(let waiters) = stage { return waiters }
                    return []
                }
                for waiter in waiters { waiter.resume() }
                return
            }
            await withCheckedContinuation { continuation in
                let done = stage.withLock { stage -> Bool in
                    guard case .handingOn(var waiters) = stage else { return true }
                    waiters.append(continuation)
                    stage = .handingOn(waiters)
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }

    /// One caller's work and the way its outcome reaches it.
    private final class Slot: Sendable {
        /// The work's result once its transaction committed (or failed), and the batch's reading to hand on first.
        typealias Outcome = (result: Result<any Sendable, any Error>, reading: ReadingHandOff?)

        private enum Waiting {
            case idle
            case waiting(CheckedContinuation<Outcome, Never>)
            case ready(Outcome)
        }

        let work: @Sendable (Database) throws -> any Sendable
        /// The caller wants the batch's reading handed on before it is answered.
        let reports: Bool
        private let waiting = Mutex(Waiting.idle)

        init(reports: Bool, work: @escaping @Sendable (Database) throws -> any Sendable) {
            self.reports = reports
            self.work = work
        }

        func outcome() async -> Outcome {
            await withCheckedContinuation { continuation in
                let ready = waiting.withLock { state -> Outcome? in
                    if case .ready(let outcome) = state { return outcome }
                    state = .waiting(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }

        func resume(_ result: Result<any Sendable, any Error>, reading: ReadingHandOff?) {
            let outcome = (result, reading)
            let continuation = waiting.withLock { state -> CheckedContinuation<Outcome, Never>? in
                if case .waiting(let continuation) = state { return continuation }
                state = .ready(outcome)
                return nil
            }
            continuation?.resume(returning: outcome)
        }
    }
}
