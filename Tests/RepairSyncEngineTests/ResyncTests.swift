import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import Testing

/// `resync`: a collection pulled again from the beginning at an admin's request, without purging the store.
@Suite("Resync of one collection")
struct ResyncTests {
    @Test(
        "resync fixes a record that drifted without a feed entry, removes a ghost the server never had, keeps an edit made during it, and leaves other collections alone"
    )
    func resyncRepairsDrift() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            // Drift: the server's ord_5 changes without moving in its feed (a restore that kept its place), so no
            // incremental pull can see it.
            var json =
                try JSONSerialization.jsonObject(
                    with: try await h.backend.get("/api/v1/orders/ord_5").body) as! [String: Any]
            json["notes"] = "changed behind the feed"
            json["version"] = (json["version"] as! Int) + 1
            try await h.serverRestore("orders", json, inFeed: false)
            try await Self.insertGhost(h)
            #expect(await h.engine.sync([.orders]).succeeded)
            #expect(
                try h.local(Order.self, "ord_5")?.notes != "changed behind the feed",
                "an incremental pull cannot see it")
            #expect(try h.local(Order.self, "ord_ghost") != nil)
            let devicesCursor = try h.cursor(.devices)

            // While the resync pulls, someone edits ord_7 locally.
            let engine = h.engine
            let edited = h.recorder.once(when: { if case .pageApplied(.orders, _, _, _) = $0 { true } else { false } })
            {
                _ = try? engine.changes.update(.orders, id: "ord_7", fields: ["notes": "edited during the resync"])
            }
            let report = await h.engine.resync([.orders])
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(edited.fired)
            #expect(report.resynced == ["orders"])
            let server = try await h.serverCounts()
            #expect(report.pulled["orders"] == server["orders"], "every order pulled again")
            #expect(report.pulled["devices"] == nil, "only the named collection")
            #expect(try h.cursor(.devices) == devicesCursor)
            #expect(try h.local(Order.self, "ord_5")?.notes == "changed behind the feed")
            #expect(try h.local(Order.self, "ord_ghost") == nil, "the ghost went once its endpoint said 404")
            #expect(report.deleted == 1)
            #expect(try h.localCount("orders") == server["orders"])
            #expect(try h.integer("SELECT COUNT(*) FROM resync_marks") == 0)
            #expect(try h.local(Order.self, "ord_7")?.notes == "edited during the resync")
            #expect(try h.integer("SELECT COUNT(*) FROM outbox WHERE record_id = 'ord_7'") == 1, "still queued")

            #expect(await h.engine.sync([]).succeeded)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_7").notes == "edited during the resync")
        }
    }

    @Test("a resync asked for while a run pulls waits for that run: its reset is never overwritten by the run's pages")
    func resyncDuringARun() async throws {
        try await EngineHarness.with(orders: 60) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await Self.insertGhost(h)
            // A few server edits, so the running pull has pages to apply.
            for n in 1...45 { try await h.serverEdit("orders", "ord_\(n)", #"{"notes":"server \#(n)"}"#) }
            let engine = h.engine
            let resync = Resync()
            let asked = h.recorder.once(when: { if case .pageApplied(.orders, _, _, true) = $0 { true } else { false } }
            ) {
                resync.task = Task { await engine.resync([.orders]) }
            }
            let running = await h.engine.sync([.orders])
            #expect(running.succeeded)
            #expect(asked.fired)
            // Asked for while that run pulled: the next run carries it out, from the very beginning (a reset made
            // under the running pull would have had its cursor overwritten by that pull's next page).
            #expect(running.resynced.isEmpty)
            let report = try #require(await resync.task?.value)
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(report.resynced == ["orders"])
            #expect(report.pulled["orders"] == (try await h.serverCounts())["orders"], "every order pulled again")
            #expect(try h.local(Order.self, "ord_ghost") == nil)
            #expect(try h.integer("SELECT COUNT(*) FROM resync_marks") == 0)
            #expect(try h.cursor(.orders) != nil)
        }
    }
}

extension ResyncTests {
    /// A row the server never had (a damaged or hand-edited replica): a copy of ord_1 under another id.
    static func insertGhost(_ h: EngineHarness) async throws {
        try await h.store.write { db in
            try db.execute(sql: "CREATE TEMP TABLE ghost AS SELECT * FROM orders WHERE id = 'ord_1'")
            try db.execute(sql: "UPDATE ghost SET id = 'ord_ghost', order_number = 999999")
            try db.execute(sql: "INSERT INTO orders SELECT * FROM ghost")
            try db.execute(sql: "DROP TABLE ghost")
        }
    }
}

private final class Resync: @unchecked Sendable {
    var task: Task<SyncReport, Never>?
}
