import Dispatch
import Foundation
import GRDB
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

@Suite struct ConcurrencyTests {
    func orders(_ range: Range<Int>) throws -> [Order] {
        let base = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        return range.map { i in
            var order = base
            order.id = "ord_\(i)"
            order.orderNumber = i
            return order
        }
    }

    /// WAL: a reader is not blocked by an open write transaction, and sees the last committed state.
    @Test func readersRunWhileAWriterHoldsATransaction() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        let committed = try orders(0..<100)
        let pending = try orders(100..<200)
        try store.write { db in try db.upsert(committed, syncedAt: nil) }

        let readerDone = DispatchSemaphore(value: 0)
        let seen = LockedBox<Int?>(nil)
        try store.write { db in
            try db.upsert(pending, syncedAt: nil)
            // The write transaction is open and holds 100 uncommitted rows. A reader on another thread must
            // finish now, without waiting for this transaction, and must not see them.
            Thread.detachNewThread {
                let count = try? store.read { db in try Order.fetchCount(db) }
                seen.withLock { $0 = count }
                readerDone.signal()
            }
            #expect(readerDone.wait(timeout: .now() + 30) == .success, "the reader was blocked by the writer")
        }
        #expect(seen.withLock { $0 } == 100)
        #expect(try store.read { db in try Order.fetchCount(db) } == 200)
    }

    /// Many readers during many commits: every read sees a whole number of committed batches, never part of one.
    @Test func readersNeverSeeAPartialTransaction() async throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        let batch = 50
        let batches = 40
        let all = try orders(0..<(batch * batches))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for b in 0..<batches {
                    let slice = Array(all[(b * batch)..<((b + 1) * batch)])
                    try await store.write { db in try db.upsert(slice, syncedAt: nil) }
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    var last = 0
                    while last < batch * batches {
                        let count = try await store.read { db in try Order.fetchCount(db) }
                        #expect(count % batch == 0, "saw \(count) rows: a partial transaction")
                        #expect(count >= last, "the row count went backwards")
                        last = count
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func reopeningKeepsData() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("replica.sqlite")
        do {
            let store = try ReplicaStore.open(at: path)
            try store.write { db in try db.upsert(try self.orders(0..<10), syncedAt: .now()) }
            try store.write { db in
                var meta = try #require(try SyncMetadata.fetchOne(db, key: "orders"))
                meta.cursor = "c-10"
                meta.state = .idle
                try meta.update(db)
            }
        }
        let reopened = try ReplicaStore.open(at: path)
        #expect(
            try reopened.appliedMigrations() == [
                "v1-replica", "v2-engine", "v3-in-doubt-and-resync", "v4-local-creates",
                "v5-list-indexes-and-outbox-counts", "v6-push-priority", "v7-discarded-in-doubt",
                "v8-children-by-their-own-tombstones", "v9-status-generation", "v10-push-priority-by-join",
                "v11-outbox-checks-without-lists", "v12-inserted-messages",
            ])
        #expect(try reopened.read { db in try Order.fetchCount(db) } == 10)
        #expect(try reopened.read { db in try SyncMetadata.fetchOne(db, key: "orders")?.cursor } == "c-10")
        #expect(try reopened.integrityProblems().isEmpty)
    }
}

/// A lock-protected value for handing results between threads in tests.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
