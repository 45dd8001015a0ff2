import Foundation
import GRDB
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

@testable import RepairSyncEngine

/// What a run tells the scheduler about the changes it leaves (`SyncReport.nextChangeDueMilliseconds`, from
/// `Outbox.nextAttemptAt`): a change due already must bring the next run at once — found live in the 30 % fault
/// scenario: a failed entry a pull's rebase had rewritten (retry time cleared) waited for the periodic run, 15
/// minutes, with the outbox otherwise drained — and a change that cannot go must not bring a run at all.
@Suite("Outbox: when the next change is due")
struct NextAttemptTests {
    static func store(orders: [String]) async throws -> (ReplicaStore, SyncEngine, TemporaryDirectory) {
        let directory = try TemporaryDirectory(prefix: "next-attempt")
        let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
        for id in orders {
            var order = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
            order.id = id
            let stored = order
            try await store.write { db in try stored.upsert(db, syncedAt: .now()) }
        }
        let api = APIClient(configuration: .init(baseURL: "http://127.0.0.1:9", token: "t"))
        let engine = try SyncEngine(store: store, api: api, configuration: EngineHarness.configuration())
        return (store, engine, directory)
    }

    @Test("a failed change with no retry time (as a rebase leaves it) is due now; one with a retry time is due then")
    func dueNowAndLater() async throws {
        let (store, engine, directory) = try await Self.store(orders: ["ord_a", "ord_b"])
        _ = directory
        try await engine.update(.orders, id: "ord_a", fields: ["notes": "a"])
        try await engine.update(.orders, id: "ord_b", fields: ["notes": "b"])
        let now = Timestamp.now()
        let later = Timestamp(millisecondsSince1970: now.millisecondsSince1970 + 1_500)
        let horizon = Duration.seconds(61)
        try await store.write { db in
            try db.execute(
                sql: "UPDATE outbox SET state = 'failed', next_attempt_at = ?", arguments: [later.millisecondsSince1970]
            )
        }
        #expect(try await store.read { db in try Outbox.nextAttemptAt(db, now: now, horizon: horizon) } == later)
        // A rebase rewrote one of them: still failed, its retry time cleared — it can go now.
        try await store.write { db in
            try db.execute(sql: "UPDATE outbox SET next_attempt_at = NULL WHERE record_id = 'ord_b'")
        }
        #expect(try await store.read { db in try Outbox.nextAttemptAt(db, now: now, horizon: horizon) } == now)
    }

    @Test("a change waiting behind another change of its record is not due: no run is planned for it")
    func waitingBehindIsNotDue() async throws {
        let (store, engine, directory) = try await Self.store(orders: ["ord_a"])
        _ = directory
        try await engine.update(.orders, id: "ord_a", fields: ["notes": "first"])
        let now = Timestamp.now()
        let later = Timestamp(millisecondsSince1970: now.millisecondsSince1970 + 1_500)
        // The first was sent, is in doubt and failed, retried later; so the next edit gets an entry of its own,
        // which waits behind it with no retry time of its own.
        try await store.write { db in
            try db.execute(
                sql: "UPDATE outbox SET state = 'failed', sent = 1, next_attempt_at = ?",
                arguments: [later.millisecondsSince1970])
        }
        try await engine.update(.orders, id: "ord_a", fields: ["status": "ready"])
        let entries = try engine.outboxEntries()
        try #require(entries.count == 2, "two entries: \(entries.map(\.fields))")
        #expect(try await store.read { db in try Outbox.nextAttemptAt(db, now: now, horizon: .seconds(61)) } == later)
    }
}
