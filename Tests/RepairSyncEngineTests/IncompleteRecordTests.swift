import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairSyncEngine
import RepairSyncModels
import Synchronization
import Testing

/// docs/api.md 2.4: a record carries every key of its shape, `null` when empty. A key left out cannot be read either
/// way without losing something — as `null`, a server that sends only what changed clears fields; as "unchanged", a
/// server that leaves out its empty keys (`omitempty`) never clears one — so such a record is refused. The first is
/// played by a transport that drops a key with a value, the second by `repair-api-dev`'s defect `omit_null_keys`.
@Suite("Records short of a key", .timeLimit(.minutes(2)))
struct IncompleteRecordTests {
    @Test(
        "a page whose records leave out a key that has a value (a server sending only what changed): refused, the order's notes kept; read as null they were cleared"
    )
    func keyWithAValueLeftOut() async throws {
        try await EngineHarness.with { h in
            try await h.serverEdit("orders", "ord_1", #"{"notes":"keep me"}"#)
            #expect(await h.engine.performFullSync().succeeded)
            let synced = try #require(try h.local(Order.self, "ord_1"))
            try await h.serverEdit("orders", "ord_1", #"{"assigned_user_name":"Someone Else"}"#)
            let transport = ForeignAnswerTests.RewritingTransport(
                inner: ForeignAnswerTests.http(h),
                matches: { $0.method == "GET" && $0.path.contains("/orders/changes") },
                rewrite: { page in
                    guard let data = page["data"] as? [[String: Any]] else { return }
                    page["data"] = data.map { record in record.filter { $0.key != "notes" } }
                })
            let engine = try ForeignAnswerTests.engine(h, transport)
            let report = await engine.sync([.orders])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 1)
            #expect(report.failedCollections["orders"]?.contains(".notes: left out") == true, "\(report)")
            #expect(try h.local(Order.self, "ord_1")?.notes == "keep me", "the notes are not cleared")
            #expect(try h.local(Order.self, "ord_1")?.version == synced.version, "nothing of the page is taken")
            // The server's whole records: the edit arrives, the notes with it.
            #expect(await h.engine.sync([.orders]).succeeded)
            let order = try #require(try h.local(Order.self, "ord_1"))
            #expect(order.assignedUserName == "Someone Else" && order.notes == "keep me", "\(order)")
        }
    }

    @Test(
        "a server that leaves out its null keys: its pages are refused naming the key, nothing of them is taken, a PATCH's answer short of keys acknowledges nothing; with the keys back the edit is settled under its key, written once"
    )
    func nullKeysLeftOut() async throws {
        try await EngineHarness.with(configuration: EngineHarness.hourlyRetries) { h in
            // Ours will be answered without the order's empty fields (assigned_user_id).
            try await h.serverEdit("orders", "ord_1", #"{"assigned_user_id":null}"#)
            #expect(await h.engine.performFullSync().succeeded)
            let order = try await h.serverRecord(Order.self, "orders", "ord_1")
            let before = try #require(try h.local(Client.self, "cli_1"))
            // Another user's edit the next page brings — with the client's empty fields (company) left out.
            try await h.serverEdit("clients", "cli_1", #"{"first_name":"Newer","company":null}"#)
            try await h.engine.update(.orders, id: "ord_1", fields: ["notes": "ours"])

            let on = try await h.backend.send(.PUT, "/admin/defects", json: #"{"defects":["omit_null_keys"]}"#)
            #expect(on.status == 200)
            let report = await h.engine.sync([.clients])
            _ = try await h.backend.send(.DELETE, "/admin/defects")

            let clients = report.failedCollections["clients"] ?? ""
            // cli_1, alone in the page, at its first empty key (its company, or one the seed left empty).
            #expect(clients.contains("ChangesPage<Client>: data[0].") && clients.contains(": left out"), "\(report)")
            let local = try #require(try h.local(Client.self, "cli_1"))
            #expect(local.version == before.version && local.firstName == before.firstName, "nothing of the page")
            #expect(report.pushed == 0 && report.pushFailures == 1, "\(report)")
            let entries = try h.engine.outboxEntries()
            #expect(entries.count == 1 && entries.first?.lastError?.contains("left out") == true, "\(entries)")
            #expect(try h.local(Order.self, "ord_1")?.notes == "ours", "the edit is still shown, not the server's")

            // The keys back, the retry due (an hour on): the write is settled by its key's stored answer.
            let later = try h.reopenedEngine(
                configuration: EngineHarness.hourlyRetries, clock: SystemEngineClock(skewMilliseconds: 7_200_000))
            let again = await later.sync([.clients])
            #expect(again.succeeded && again.pushed == 1, "\(again)")
            #expect(try h.local(Client.self, "cli_1")?.firstName == "Newer")
            let remote = try await h.serverRecord(Order.self, "orders", "ord_1")
            #expect(remote.notes == "ours" && remote.version == order.version + 1, "written once")
            #expect(try later.pendingChangesCount() == 0)
        }
    }
}
