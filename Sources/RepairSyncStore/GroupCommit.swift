public import GRDB
internal import Synchronization

/// Write transactions that arrive together share one commit (group commit): each commit with `synchronous=FULL`
/// costs an fsync, and concurrent writers should pay for one, not one each.
///
/// The guarantee is the same as `ReplicaStore.write`: `write` returns only after the transaction holding its work
/// committed (durably, on the replica's FULL writer); if the work throws, its own changes are rolled back and the
/// error is thrown to its caller alone — the other writers of the batch are not affected (each runs in a savepoint).
/// Works are applied in arrival order.
///
/// ```swift
/// // 20 clients calling this at once: a few commits, not 20.
/// let seq = try await store.groupCommit.write { db in try insertChange(db) }
/// ```
///
/// How: the first writer that finds no commit in progress leads: it takes everything queued so far, applies it in
/// one transaction, commits, hands each waiter its result, and passes the lead to the first writer that queued
/// during the commit. Nobody waits on a timer; a lone writer commits at once.
///
/// A batch can also be *reported* (`reportBatches`): a batch holding a `write(reporting: true)` reads something
/// after its works, in its own transaction — the state its commit makes — and the reading is handed on once the
/// batch committed, before any of its callers is answered. One read and one hand-off per commit, however many
/// writes share it (the engine publishes the outbox counts so).
public final class GroupCommit: Sendable {
    private let writer: any DatabaseWriter
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

    public init(writer: any DatabaseWriter) {
        self.writer = writer
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
        let slot = Slot(reports: reporting) { db in try work(db) }
        let leads = state.withLock { state in
            state.queue.append(slot)
            guard !state.committing else { return false }
            state.committing = true
            return true
        }
        if !leads, case .done(let result) = await slot.outcome() {
            return try Self.cast(result)
        }
        return try Self.cast(await commitQueued(leader: slot))
    }

    /// Commits everything queued (the leader's own work included) in one transaction, answers the waiters, and
    /// hands the lead on. Returns the leader's result.
    private func commitQueued(leader: Slot) async -> Result<any Sendable, any Error> {
        let batch = state.withLock { state in
            defer { state.queue.removeAll() }
            return state.queue
        }
        let report = batch.contains(where: \.reports) ? report.withLock { $0 } : nil
        let results: [Result<any Sendable, any Error>]
        var reading: (any Sendable)?
        do {
            // `asyncWrite` rather than the async `write`: GRDB interrupts the database access of a cancelled task, and
            // the leader's cancellation (its client went away) must not undo the others' changes.
            (results, reading) = try await withCheckedThrowingContinuation { continuation in
                writer.asyncWrite({ db in
                    (Self.apply(batch, db), report.flatMap { try? $0.read(db) })
                }, completion: { _, result in continuation.resume(with: result) })
            }
        } catch {
            // The commit itself failed: nothing of the batch is on disk, and there is nothing to report.
            results = Array(repeating: .failure(error), count: batch.count)
        }
        if let report, let reading { await report.committed(reading) }
        let next = state.withLock { state -> Slot? in
            guard let first = state.queue.first else {
                state.committing = false
                return nil
            }
            return first
        }
        var own: Result<any Sendable, any Error> = .failure(CancellationError())
        for (slot, result) in zip(batch, results) {
            if slot === leader { own = result } else { slot.resume(.done(result)) }
        }
        next?.resume(.lead)
        return own
    }

    /// Each work in its own savepoint, in arrival order: one that throws is rolled back alone.
    private static func apply(_ batch: [Slot], _ db: Database) -> [Result<any Sendable, any Error>] {
        batch.map { slot in
            var result: Result<any Sendable, any Error> = .failure(CancellationError())
            do {
                try db.inSavepoint {
                    result = .success(try slot.work(db))
                    return .commit
                }
            } catch {
                result = .failure(error)
            }
            return result
        }
    }

    private static func cast<T>(_ result: Result<any Sendable, any Error>) throws -> T {
        // Each slot's work returns its caller's T: the cast cannot fail.
        try result.get() as! T
    }

    /// One caller's work and the way its outcome reaches it.
    private final class Slot: Sendable {
        enum Outcome: Sendable {
            /// The transaction with this work committed (or failed): here is the work's result.
            case done(Result<any Sendable, any Error>)
            /// The previous batch committed while this one waited: this caller commits the next batch.
            case lead
        }

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

        func resume(_ outcome: Outcome) {
            let continuation = waiting.withLock { state -> CheckedContinuation<Outcome, Never>? in
                if case .waiting(let continuation) = state { return continuation }
                state = .ready(outcome)
                return nil
            }
            continuation?.resume(returning: outcome)
        }
    }
}
