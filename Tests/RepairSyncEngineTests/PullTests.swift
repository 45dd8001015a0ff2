import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import Testing

/// Pulling: pages, cursors, expired cursors, malformed pages, records with pending changes.
@Suite("Pull", .timeLimit(.minutes(2)))
struct PullTests {
    @Test(
        "a full sync pulls every collection over several pages and keeps the dashboard snapshots",
        arguments: RunningBackend.Scheme.allCases)
    func fullSyncOverSeveralPages(scheme: RunningBackend.Scheme) async throws {
        try await EngineHarness.with(orders: 100, scheme: scheme) { h in
            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")

            let server = try await h.serverCounts()
            let pages = h.recorder.pagesApplied
            for collection in SyncCollection.allCases {
                let expected = try #require(server[collection.name])
                #expect(try h.localCount(collection.name) == expected, "\(collection)")
                #expect(report.pulled[collection.name] == expected, "\(collection)")
                // 40 per page: every collection of a 100-order shop needs at least two.
                let minimum = (expected + 39) / 40
                #expect(minimum >= 2)
                #expect((minimum...minimum + 1).contains(pages[collection, default: 0]), "\(collection): \(pages)")
                #expect(try h.cursor(collection) != nil)
            }

            let remote = try await h.serverRecord(Order.self, "orders", "ord_17")
            let local = try #require(try h.local(Order.self, "ord_17"))
            #expect(local.total == remote.total)
            #expect(local.balance == remote.balance)
            #expect(local.status == remote.status)
            #expect(local.version == remote.version)

            let periods = try await h.store.read { db in
                try String.fetchAll(db, sql: "SELECT period FROM dashboard_snapshots ORDER BY period")
            }
            #expect(periods == ["month", "today", "week"])
            let status = await h.engine.status
            #expect(status.collections.allSatisfy { $0.hasCursor && $0.lastSuccessAt != nil })
            #expect(status.metrics.successes == 1)
        }
    }

    @Test("a second sync resumes from the cursor and pulls only what changed")
    func incremental() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.serverEdit("orders", "ord_3", #"{"notes":"changed on the server"}"#)
            try await h.serverEdit("clients", "cli_2", #"{"city":"Leeds"}"#)

            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(report.pulled == ["orders": 1, "clients": 1, "devices": 0, "tickets": 0, "ticket_messages": 0])
            #expect(try h.local(Order.self, "ord_3")?.notes == "changed on the server")
            #expect(try h.local(Client.self, "cli_2")?.city == "Leeds")
        }
    }

    @Test("410 for an expired cursor resets that collection and resyncs it from the beginning, once")
    func expiredCursor() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let response = try await h.backend.send(.POST, "/admin/cursors/expire")
            #expect(response.status == 200)
            try await h.serverEdit("orders", "ord_4", #"{"notes":"after expiry"}"#)

            let report = await h.engine.sync([.orders])
            #expect(report.succeeded, "\(report.stop ?? "")")
            let resets = h.recorder.events.filter {
                if case .cursorReset(.orders) = $0 { return true } else { return false }
            }
            #expect(resets.count == 1)
            let server = try await h.serverCounts()
            #expect(report.pulled["orders"] == server["orders"], "a resync pulls every order again")
            #expect(try h.localCount("orders") == server["orders"])
            #expect(try h.local(Order.self, "ord_4")?.notes == "after expiry")
        }
    }

    @Test(
        "a first pull that fails (its collection only, or the whole run) leaves every list index of its table built",
        arguments: ["truncated", "401"])
    func bulkLoadThatFails(fault: String) async throws {
        try await EngineHarness.with { h in
            try await h.fault(fault, method: "GET", path: "/api/v1/orders/changes")
            let report = await h.engine.performFullSync()
            #expect(!report.succeeded)
            #expect(try h.cursor(.orders) == nil, "the orders pull committed nothing")
            for table in ["orders", "devices", "clients", "tickets"] {
                #expect(try await h.store.read { db in try ListIndexes.missing(on: table, db) }.isEmpty, "\(table)")
            }
        }
    }

    @Test(
        "list indexes a crash took with it (a load in bulk interrupted) are built by the next pull of their collection")
    func listIndexesAfterACrash() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.store.write { db in
                for index in ListIndexes.all { try db.execute(sql: "DROP INDEX \(index.name)") }
            }
            #expect(await h.engine.sync([.orders, .clients]).succeeded)
            for table in ["orders", "clients"] {
                #expect(try await h.store.read { db in try ListIndexes.missing(on: table, db) }.isEmpty, "\(table)")
            }
            #expect(
                try await h.store.read { db in try ListIndexes.missing(on: "devices", db) }.count == 2,
                "not pulled: not built yet")
            #expect(await h.engine.sync([.devices, .tickets]).succeeded)
            for table in ["devices", "tickets"] {
                #expect(try await h.store.read { db in try ListIndexes.missing(on: table, db) }.isEmpty, "\(table)")
            }
        }
    }

    @Test("a truncated page commits nothing, leaves the cursor, stops the run with an error; the next run recovers")
    func truncatedPage() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let cursorBefore = try h.cursor(.devices)
            try await h.serverEdit("devices", "dev_1", #"{"diagnosis":"server diagnosis 1"}"#)
            try await h.serverEdit("devices", "dev_2", #"{"diagnosis":"server diagnosis 2"}"#)
            try await h.fault("truncated", method: "GET", path: "/api/v1/devices/changes")

            let failed = await h.engine.sync([.devices])
            #expect(!failed.succeeded)
            #expect(failed.stop?.contains("malformed") == true, "\(failed.stop ?? "")")
            #expect(try h.cursor(.devices) == cursorBefore)
            #expect(try h.local(Device.self, "dev_1")?.diagnosis != "server diagnosis 1")
            #expect(try h.local(Device.self, "dev_2")?.diagnosis != "server diagnosis 2")
            let status = await h.engine.status
            #expect(status.phase.name == "error")
            #expect(status.collections.first { $0.collection == .devices }?.lastError != nil)

            let recovered = await h.engine.sync([.devices])
            #expect(recovered.succeeded, "\(recovered.stop ?? "")")
            #expect(try h.local(Device.self, "dev_1")?.diagnosis == "server diagnosis 1")
            #expect(try h.local(Device.self, "dev_2")?.diagnosis == "server diagnosis 2")
        }
    }

    @Test("a pull while a local change is pending keeps the local value and takes the server's other fields")
    func pullKeepsPendingChange() async throws {
        try await EngineHarness.with(orders: 100) { h in
            #expect(await h.engine.performFullSync().succeeded)
            // The server changes the status; the feed puts ord_90 on the last page of the next pull.
            let serverStatus: OrderStatus =
                try await h.serverRecord(Order.self, "orders", "ord_90").status == .collected ? .cancelled : .collected
            try await h.serverEdit("orders", "ord_90", #"{"status":"\#(serverStatus.rawValue)"}"#)
            try await h.serverEdit("orders", "ord_1", #"{"notes":"moves the cursor on"}"#)
            // While the pull runs, someone changes ord_90's notes locally: pending during the pull.
            let engine = h.engine
            let edited = h.recorder.once(when: { if case .pageApplied(.clients, _, _, _) = $0 { true } else { false } })
            {
                _ = try? engine.changes.update(.orders, id: "ord_90", fields: ["notes": "local notes"])
            }
            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(edited.fired)

            let local = try #require(try h.local(Order.self, "ord_90"))
            #expect(local.notes == "local notes")
            #expect(local.status == serverStatus)
            #expect(try engine.pendingChangesCount() == 1)
            #expect(try engine.conflicts().isEmpty, "different fields are not a conflict")

            // The next push carries only the local field, against the new base: no 412.
            let conflictsBefore = try await h.counter("version_conflicts")
            let pushed = await h.engine.sync([])
            #expect(pushed.pushed == 1)
            #expect(try engine.pendingChangesCount() == 0)
            #expect(try await h.counter("version_conflicts") == conflictsBefore)
            let remote = try await h.serverRecord(Order.self, "orders", "ord_90")
            #expect(remote.notes == "local notes")
            #expect(remote.status == serverStatus)
        }
    }

    @Test(
        "an order that leaves the replica for a moment keeps its devices: they go by their own tombstones (seed 75063)")
    func devicesOutliveAnOrderThatComesBack() async throws {
        try await EngineHarness.with { h in
            // Deleted and restored on the server before the first pull, so that the first orders page ever served —
            // what the stale cache below answers with — holds the order's tombstone.
            let order = try await h.backend.get("/api/v1/orders/ord_5").object()
            let feed = try await h.backend.get("/api/v1/devices/changes?limit=500").object()
            let devices = (feed["data"] as? [[String: Any]] ?? []).filter { $0["order_id"] as? String == "ord_5" }
            #expect(!devices.isEmpty, "ord_5 has devices in the seed")
            try await h.serverDelete("orders", "ord_5")
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.local(Order.self, "ord_5") == nil)
            // The server is put back (a restore); the next pull brings the order and its devices.
            try await h.serverRestore("orders", order)
            for device in devices { try await h.serverRestore("devices", device) }
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.local(Order.self, "ord_5") != nil)
            let deviceIds = devices.compactMap { $0["id"] as? String }
            #expect(try deviceIds.allSatisfy { try h.local(Device.self, $0) != nil })

            // A stale cached orders page: ord_5's tombstone of before the restore. The order leaves the replica;
            // its devices, unchanged on the server and behind the devices' cursor, must not go with it.
            try await h.fault("stale_page", method: "GET", path: "/api/v1/orders/changes")
            _ = await h.engine.sync([.orders])
            #expect(try h.local(Order.self, "ord_5") == nil)
            #expect(
                try deviceIds.allSatisfy { try h.local(Device.self, $0) != nil }, "a device goes by its own tombstone")

            // The stale page took the cursor back: the next pull brings the order again, and nothing is missing.
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.local(Order.self, "ord_5") != nil)
            let server = try await h.serverCounts()
            #expect(try h.localCount("orders") == server["orders"])
            #expect(try h.localCount("devices") == server["devices"])
        }
    }

    /// Found by a review playing a caching server: the stale page's tombstone deleted a live order (and would have
    /// dropped the edit waiting on it), and nothing brought it back until its next change on the server.
    @Test("a tombstone older than the replica's copy is checked with the record's GET: a record the server has is kept")
    func staleTombstoneKeepsALiveRecord() async throws {
        try await EngineHarness.with { h in
            // ord_5 deleted before the first pull (the first orders page ever served, which the stale cache answers
            // with, holds its tombstone), then created again later than that tombstone.
            var order = try await h.backend.get("/api/v1/orders/ord_5").object()
            try await h.serverDelete("orders", "ord_5")
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.local(Order.self, "ord_5") == nil)
            order["updated_at"] = "2030-01-01T00:00:00Z"
            try await h.serverRestore("orders", order)
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.local(Order.self, "ord_5") != nil)

            try await h.fault("stale_page", method: "GET", path: "/api/v1/orders/changes")
            _ = await h.engine.sync([.orders])
            #expect(try h.local(Order.self, "ord_5") != nil, "a stale tombstone deleted a record the server has")
        }
    }
}
