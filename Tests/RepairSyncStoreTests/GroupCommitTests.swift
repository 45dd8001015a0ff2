import Dispatch
import Foundation
import GRDB
import RepairSyncStore
import RepairSyncTestSupport
import Synchronization
import Testing

/// Group commit: writers that arrive while a commit is under way share the next one, each keeps its own result,
/// and everything acknowledged is in the file when read by a new connection.
@Suite struct GroupCommitTests {
    /// Counts the commits that wrote to `scratch`.
    final class CommitCounter: TransactionObserver, Sendable {
        private let counts = Mutex((changed: false, commits: 0))
        var commits: Int { counts.withLock { $0.commits } }

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "scratch" }
        func databaseDidChange(with event: DatabaseEvent) { counts.withLock { $0.changed = true } }
        func databaseDidCommit(_ db: Database) {
            counts.withLock { counts in
                if counts.changed { counts.commits += 1 }
                counts.changed = false
            }
        }
        func databaseDidRollback(_ db: Database) { counts.withLock { $0.changed = false } }
    }

    /// Opens a store with a scratch table and a commit counter.
    func store(_ dir: TemporaryDirectory) throws -> (ReplicaStore, CommitCounter) {
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        try store.write { db in try db.execute(sql: "CREATE TABLE scratch (n INTEGER PRIMARY KEY)") }
        let counter = CommitCounter()
        store.writer.add(transactionObserver: counter, extent: .databaseLifetime)
        return (store, counter)
    }

    /// Starts a write of row 0 whose transaction stays open until `release` is signalled; returns once it is open, so
    /// every write made meanwhile queues for the next commit.
    func blockedFirstWrite(
        _ store: ReplicaStore, reporting: Bool = false
    ) async -> (write: Task<Int, any Error>, release: DispatchSemaphore) {
        let release = DispatchSemaphore(value: 0)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let write = Task {
            try await store.groupCommit.write(reporting: reporting) { db in
                startedContinuation.yield()
                release.wait()
                try db.execute(sql: "INSERT INTO scratch (n) VALUES (0)")
                return 0
            }
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        return (write, release)
    }

    /// The first write holds its transaction open until `others` writes are queued behind it, so the batching is
    /// deterministic: those all go into the second commit.
    func writeBehindABlockedCommit(
        _ store: ReplicaStore, others: Int, reporting: Bool = false,
        work: @escaping @Sendable (Int, Database) throws -> Void
    ) async throws -> [Result<Int, any Error>] {
        let release = DispatchSemaphore(value: 0)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        return try await withThrowingTaskGroup(of: (Int, Result<Int, any Error>).self) { group in
            group.addTask {
                let value = try await store.groupCommit.write(reporting: reporting) { db in
                    startedContinuation.yield()
                    release.wait()
                    try work(0, db)
                    return 0
                }
                return (0, .success(value))
            }
            var iterator = started.makeAsyncIterator()
            await iterator.next()
            for n in 1...others {
                group.addTask {
                    do {
                        return (
                            n,
                            .success(
                                try await store.groupCommit.write(reporting: reporting) { db in
                                    try work(n, db)
                                    return n
                                })
                        )
                    } catch {
                        return (n, .failure(error))
                    }
                }
            }
            while store.groupCommit.queuedWrites < others { await Task.yield() }
            release.signal()
            var results = [Result<Int, any Error>](repeating: .success(-1), count: others + 1)
            for try await (n, result) in group { results[n] = result }
            return results
        }
    }

    @Test("writes queued during a commit share the next one, and every acknowledged write is on disk")
    func concurrentWritesShareOneCommit() async throws {
        let dir = try TemporaryDirectory()
        let (store, counter) = try store(dir)
        let results = try await writeBehindABlockedCommit(store, others: 49) { n, db in
            try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
        }
        #expect(results.map { try? $0.get() } == Array(0...49))
        #expect(counter.commits == 2, "the first write's commit, then one for the 49 queued behind it")
        try store.close()

        // A new connection reads what was acknowledged.
        let reopened = try DatabaseQueue(path: dir.path("replica.sqlite"))
        let stored = try await reopened.read { db in try Int.fetchAll(db, sql: "SELECT n FROM scratch ORDER BY n") }
        #expect(stored == Array(0...49))
    }

    @Test("a write that fails in a shared commit rolls back alone and its caller alone gets the error")
    func failedWriteRollsBackAlone() async throws {
        struct Refused: Error {}
        let dir = try TemporaryDirectory()
        let (store, counter) = try store(dir)
        let results = try await writeBehindABlockedCommit(store, others: 3) { n, db in
            try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
            if n == 2 { throw Refused() }
        }
        #expect(results.map { try? $0.get() } == [0, 1, nil, 3])
        #expect(throws: Refused.self) { try results[2].get() }
        #expect(counter.commits == 2)
        let stored = try await store.read { db in try Int.fetchAll(db, sql: "SELECT n FROM scratch ORDER BY n") }
        #expect(stored == [0, 1, 3], "the refused write's own insert was rolled back, the others kept")
    }

    /// The rows of `scratch` a transaction observer saw committed.
    final class CommittedRows: TransactionObserver, Sendable {
        private let rows = Mutex((pending: [Int64](), committed: [Int64]()))
        var committed: [Int64] { rows.withLock { $0.committed } }

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "scratch" }
        func databaseDidChange(with event: DatabaseEvent) { rows.withLock { $0.pending.append(event.rowID) } }
        func databaseDidCommit(_ db: Database) {
            rows.withLock { rows in
                rows.committed += rows.pending
                rows.pending = []
            }
        }
        func databaseDidRollback(_ db: Database) { rows.withLock { $0.pending = [] } }
    }

    @Test("a transaction observer sees the works a shared commit kept, and not the one rolled back to its savepoint")
    func observersFollowTheSavepoints() async throws {
        struct Refused: Error {}
        let dir = try TemporaryDirectory()
        let (store, _) = try store(dir)
        let observer = CommittedRows()
        store.writer.add(transactionObserver: observer, extent: .databaseLifetime)
        _ = try await writeBehindABlockedCommit(store, others: 3) { n, db in
            try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
            if n == 2 { throw Refused() }
        }
        #expect(observer.committed == [0, 1, 3], "the refused write's insert reached no observer")
    }

    @Test("a work that ends the shared transaction fails the whole commit, and no work after it commits on its own")
    func abortedTransactionCommitsNothing() async throws {
        let dir = try TemporaryDirectory()
        let (store, _) = try store(dir)
        // What SQLite does by itself on a full disk or an I/O error: the transaction is rolled back under the batch.
        let results = try await writeBehindABlockedCommit(store, others: 3) { n, db in
            try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
            if n == 2 { try db.execute(sql: "ROLLBACK") }
        }
        #expect(results.map { try? $0.get() } == [0, nil, nil, nil], "none of the second batch was acknowledged")
        let stored = try await store.read { db in try Int.fetchAll(db, sql: "SELECT n FROM scratch ORDER BY n") }
        #expect(stored == [0], "the work after the rollback did not commit outside the batch's transaction")
        #expect(
            try await store.groupCommit.write { db in
                try db.execute(sql: "INSERT INTO scratch (n) VALUES (4)")
                return 4
            } == 4, "the next commit goes on")
    }

    @Test(
        "a reported batch is read once, in its own transaction after its works, and handed on before its callers are answered"
    )
    func reportedBatches() async throws {
        let dir = try TemporaryDirectory()
        let (store, counter) = try store(dir)
        let readings = Mutex<[Int]>([])
        store.groupCommit.reportBatches(
            read: { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM scratch") ?? -1 },
            committed: { rows in readings.withLock { $0.append(rows) } })
        let results = try await writeBehindABlockedCommit(store, others: 9, reporting: true) { n, db in
            try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
        }
        #expect(results.map { try? $0.get() } == Array(0...9))
        #expect(counter.commits == 2)
        // Two batches in a row may be handed on in either order (the engine orders readings by their generation).
        #expect(
            readings.withLock { $0.sorted() } == [1, 10],
            "one reading per commit, each with everything its commit wrote")

        let value = try await store.groupCommit.write(reporting: true) { db in
            try db.execute(sql: "INSERT INTO scratch (n) VALUES (10)")
            return 10
        }
        #expect(value == 10)
        #expect(readings.withLock { $0 } == [1, 10, 11], "read and handed on before the caller was answered")
        _ = try await store.groupCommit.write { db in try db.execute(sql: "INSERT INTO scratch (n) VALUES (11)") }
        #expect(readings.withLock { $0 } == [1, 10, 11], "a batch without a reporting write reads nothing")
    }

    @Test(
        "the writer starts the next commit itself: a batch whose hand-off is held up does not hold up the next",
        .timeLimit(.minutes(1)))
    func nextCommitDoesNotWaitForTheHandOff() async throws {
        let dir = try TemporaryDirectory()
        let (store, counter) = try store(dir)
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let readings = Mutex<[Int]>([])
        store.groupCommit.reportBatches(
            read: { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM scratch") ?? -1 },
            committed: { rows in
                // The first batch's hand-off waits until the second batch's callers have all been answered.
                if rows == 1 { for await _ in gate { break } }
                readings.withLock { $0.append(rows) }
            })
        let (first, release) = await blockedFirstWrite(store, reporting: true)
        let others = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 1...5 {
                    group.addTask {
                        try await store.groupCommit.write { db in
                            try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
                            return n
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted()
            }
        }
        while store.groupCommit.queuedWrites < 5 { await Task.yield() }
        release.signal()
        #expect(try await others.value == [1, 2, 3, 4, 5], "committed and answered while the first hand-off waits")
        #expect(readings.withLock { $0 } == [], "the first batch's reading is not handed on yet")
        open.yield()
        #expect(try await first.value == 0, "answered once its batch's reading was handed on")
        #expect(readings.withLock { $0 } == [1])
        #expect(counter.commits == 2)
    }

    @Test("a lone write commits at once, without waiting for company")
    func loneWrite() async throws {
        let dir = try TemporaryDirectory()
        let (store, counter) = try store(dir)
        for n in 0..<3 {
            #expect(
                try await store.groupCommit.write { db in
                    try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
                    return n
                } == n)
        }
        #expect(counter.commits == 3)
    }

    @Test(
        "a lone write that fails is rolled back, its caller gets its error, nothing is reported, and the next write commits"
    )
    func loneFailedWrite() async throws {
        struct Refused: Error {}
        let dir = try TemporaryDirectory()
        let (store, counter) = try store(dir)
        let readings = Mutex<[Int]>([])
        store.groupCommit.reportBatches(
            read: { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM scratch") ?? -1 },
            committed: { count in readings.withLock { $0.append(count) } })
        await #expect(throws: Refused.self) {
            try await store.groupCommit.write(reporting: true) { db in
                try db.execute(sql: "INSERT INTO scratch (n) VALUES (1)")
                throw Refused()
            }
        }
        #expect(readings.withLock { $0 }.isEmpty, "a batch that did not commit reports nothing")
        #expect(counter.commits == 0)
        #expect(
            try await store.groupCommit.write(reporting: true) { db in
                try db.execute(sql: "INSERT INTO scratch (n) VALUES (2)")
                return 2
            } == 2)
        let stored = try await store.read { db in try Int.fetchAll(db, sql: "SELECT n FROM scratch ORDER BY n") }
        #expect(stored == [2], "the failed write's insert was rolled back")
        #expect(readings.withLock { $0 } == [1])
        #expect(counter.commits == 1)
    }

    @Test("a writer whose task was cancelled after it queued is still committed, with the writes queued beside it")
    func cancelledWriterCommitsTheBatch() async throws {
        let dir = try TemporaryDirectory()
        let (store, _) = try store(dir)
        @Sendable func insert(_ n: Int) async throws -> Int {
            try await store.groupCommit.write { db in
                try db.execute(sql: "INSERT INTO scratch (n) VALUES (?)", arguments: [n])
                return n
            }
        }
        let (first, release) = await blockedFirstWrite(store)
        // Writer 1 queues first behind the blocked commit, in the next batch; its client goes away.
        let cancelled = Task { try await insert(1) }
        while store.groupCommit.queuedWrites < 1 { await Task.yield() }
        cancelled.cancel()
        let others = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 2...4 { group.addTask { try await insert(n) } }
                return try await group.reduce(into: []) { $0.append($1) }.sorted()
            }
        }
        while store.groupCommit.queuedWrites < 4 { await Task.yield() }
        release.signal()
        #expect(try await first.value == 0)
        #expect(try await cancelled.value == 1, "committed: the cancellation came after it was queued")
        #expect(try await others.value == [2, 3, 4])
        let stored = try await store.read { db in try Int.fetchAll(db, sql: "SELECT n FROM scratch ORDER BY n") }
        #expect(stored == [0, 1, 2, 3, 4])
    }
}
