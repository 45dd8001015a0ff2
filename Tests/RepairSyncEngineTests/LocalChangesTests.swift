import BackendTestSupport
import Foundation
import GRDB
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// The two ways a change gets in: the engine's own mutations and queueChange for rows another program wrote.
@Suite("Local changes", .timeLimit(.minutes(2)))
struct LocalChangesTests {
    @Test("queueChange queues exactly the fields another program changed, against the server copy")
    func queueChangeDiff() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try #require(try h.local(Device.self, "dev_6"))
            try h.writeRow(
                "devices", "dev_6", ["diagnosis": "written by the counter app", "resolution": before.resolution])

            let result = try await h.engine.queueChange(.deviceUpdated, id: "dev_6")
            guard case .queued(_, let fields) = result else {
                Issue.record("not queued: \(result)")
                return
            }
            #expect(fields == ["diagnosis"])
            #expect(try h.engine.outboxEntries().first?.fields == ["diagnosis": "written by the counter app"])
            #expect(await h.engine.status.pending == 1)

            #expect(await h.engine.sync([]).pushed == 1)
            #expect(try await h.serverRecord(Device.self, "devices", "dev_6").diagnosis == "written by the counter app")
        }
    }

    @Test(
        "a text longer than the API takes (10,000 characters) is refused at once, naming the field — an edit, a message, a row another program wrote — and nothing is queued"
    )
    func overLongTextIsRefused() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let long = String(repeating: "n", count: NewRecordShape.maximumTextLength + 1)
            func expectRefused(_ field: String, _ call: () async throws -> Void) async {
                do {
                    try await call()
                    Issue.record("\(field): a text of \(long.count) characters was taken")
                } catch EngineError.invalidValue(let named, let reason) {
                    #expect(named == field && reason.contains("longer than 10000"), "\(named): \(reason)")
                } catch {
                    Issue.record("\(error)")
                }
            }
            await expectRefused("notes") {
                _ = try await h.engine.update(.orders, id: "ord_1", fields: ["notes": long])
            }
            // Counted in code points, as the API does: 5,001 characters to Swift, 10,001 code points.
            let lines = String(repeating: "\r\n", count: 5_000) + "x"
            await expectRefused("notes") {
                _ = try await h.engine.update(.orders, id: "ord_1", fields: ["notes": lines])
            }
            await expectRefused("content") {
                _ = try await h.engine.createTicketMessage(ticketId: "tkt_1", content: long)
            }
            try h.writeRow("devices", "dev_6", ["diagnosis": long])
            await expectRefused("diagnosis") { _ = try await h.engine.queueChange(.deviceUpdated, id: "dev_6") }
            #expect(try h.engine.pendingChangesCount() == 0)
            // Nor does the next run queue the tool's row on its own (it would only go dead on the server's 422).
            let run = await h.engine.sync([.devices])
            #expect(run.succeeded && run.pushed == 0 && run.dead == 0, "\(run)")
            #expect(try h.engine.pendingChangesCount() == 0)

            // At the limit: taken.
            let longest = String(repeating: "n", count: NewRecordShape.maximumTextLength)
            try await h.engine.update(.orders, id: "ord_1", fields: ["notes": longest])
            #expect(try h.engine.pendingChangesCount() == 1)
        }
    }

    @Test(
        "queueing a record with nothing changed is a no-op that says so; queueing the same change twice answers the change already queued"
    )
    func queueChangeNothingChanged() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let unchanged = try await h.engine.queueChange(.orderUpdated, id: "ord_1")
            guard case .nothingChanged(.onServer, let reason) = unchanged else {
                Issue.record("\(unchanged)")
                return
            }
            #expect(reason.contains("ord_1"))
            #expect(try h.engine.pendingChangesCount() == 0)

            try h.writeRow("orders", "ord_1", ["notes": "edited elsewhere"])
            guard case .queued(let seq, _) = try await h.engine.queueChange(.orderUpdated, id: "ord_1") else {
                Issue.record("first queueChange did not queue")
                return
            }
            let again = try await h.engine.queueChange(.orderUpdated, id: "ord_1")
            #expect(again == .alreadyQueued(seq: seq, fields: ["notes"]))
            #expect(try h.engine.pendingChangesCount() == 1)
        }
    }

    @Test(
        "a run that finds a tool's row changed before its queueChange queues the edit; the late queueChange answers that change, not 'nothing'"
    )
    func queueChangeAfterARunQueuedIt() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try h.writeRow("orders", "ord_2", ["notes": "written by the counter app"])
            // The next run finds the row differs from its server copy and queues the edit before queueChange comes;
            // the server answers its PATCH 429, which ends the run's push: the change stays queued.
            try await h.fault("429", method: "PATCH", path: "/api/v1/orders/ord_2")
            #expect(await h.engine.sync([.orders]).pushed == 0)
            let entries = try h.engine.outboxEntries()
            #expect(entries.map(\.fields) == [["notes": "written by the counter app"]])

            let late = try await h.engine.queueChange(.orderUpdated, id: "ord_2")
            #expect(late == .alreadyQueued(seq: try #require(entries.first).seq, fields: ["notes"]))
            #expect(try h.engine.pendingChangesCount() == 1)
        }
    }

    @Test("an unknown id is a clear error naming the record, and queues nothing")
    func queueChangeUnknown() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            for (kind, id) in [
                (LocalChanges.ChangeKind.orderUpdated, "ord_nope"), (.deviceUpdated, "dev_nope"),
                (.ticketMessageCreated, "00000000-0000-4000-8000-000000000000"),
            ] {
                do {
                    _ = try await h.engine.queueChange(kind, id: id)
                    Issue.record("\(kind) \(id) was accepted")
                } catch let error as EngineError {
                    #expect("\(error)".contains(id), "\(error)")
                }
            }
            #expect(try h.engine.pendingChangesCount() == 0)
        }
    }

    /// A message another program (a counter application) inserted and has not queued yet; its id.
    static func insertMessage(_ h: EngineHarness, ticket: String, content: String) async throws -> String {
        let id = UUID().uuidString.lowercased()
        try await h.store.write { db in
            try db.execute(
                sql: """
                    INSERT INTO ticket_messages (id, ticket_id, content, sender_type, is_internal, created_at, updated_at, version)
                    VALUES (?, ?, ?, 'staff', 0, '2026-11-23T10:00:00.000Z', '2026-11-23T10:00:00.000Z', 0)
                    """, arguments: [id, ticket, content])
        }
        return id
    }

    @Test("a message another program inserted is queued once and created on the server once")
    func queueChangeMessage() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let id = try await Self.insertMessage(h, ticket: "tkt_3", content: "From the counter app")
            guard case .queued(let seq, _) = try await h.engine.queueChange(.ticketMessageCreated, id: id) else {
                Issue.record("not queued")
                return
            }
            #expect(
                try await h.engine.queueChange(.ticketMessageCreated, id: id)
                    == .alreadyQueued(seq: seq, fields: ["content", "is_internal"]))
            let created = try await h.counter("messages_created")
            #expect(await h.engine.sync([]).pushed == 1)
            #expect(try await h.counter("messages_created") == created + 1)
            #expect(
                try await h.serverRecord(TicketMessage.self, "ticket_messages", id).content == "From the counter app")
            guard case .nothingChanged(.onServer, _) = try await h.engine.queueChange(.ticketMessageCreated, id: id)
            else {
                Issue.record("a message from the server was queued")
                return
            }
        }
    }

    @Test(
        "a message another program inserted and never queued (it died before queueChange) is sent by the next run, once"
    )
    func unqueuedMessageIsPickedUp() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let id = try await Self.insertMessage(h, ticket: "tkt_3", content: "Left unqueued")
            let created = try await h.counter("messages_created")
            #expect(await h.engine.sync([]).pushed == 1)
            #expect(try await h.serverRecord(TicketMessage.self, "ticket_messages", id).content == "Left unqueued")
            #expect(await h.engine.sync([]).pushed == 0)
            #expect(try await h.counter("messages_created") == created + 1)
            #expect(try h.engine.outboxEntries().isEmpty)
        }
    }

    @Test("a message the server refused is not queued again: the answer says refused and names the dead change")
    func queueChangeRefusedMessage() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let id = try await Self.insertMessage(h, ticket: "tkt_1", content: "Refused")
            guard case .queued(let seq, _) = try await h.engine.queueChange(.ticketMessageCreated, id: id) else {
                Issue.record("not queued")
                return
            }
            try await h.fault("422", method: "POST", path: "/api/v1/tickets/tkt_1/messages")
            #expect(await h.engine.sync([]).dead == 1)
            let again = try await h.engine.queueChange(.ticketMessageCreated, id: id)
            guard case .nothingChanged(.dead(seq), let reason) = again else {
                Issue.record("\(again)")
                return
            }
            #expect(reason.contains("change \(seq)"), "\(reason)")
            #expect(try h.engine.outboxEntries().map(\.seq) == [seq], "nothing new queued")
        }
    }

    @Test("the engine's own mutations validate names and statuses and write nothing when they refuse")
    func mutationValidation() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let attempts: [(SyncCollection, String, FieldValues)] = [
                (.orders, "ord_1", ["total": "1.00"]),
                (.orders, "ord_1", ["status": "teleported"]),
                (.devices, "dev_1", ["status": nil]),
                (.clients, "cli_1", ["notes": "x"]),
                (.orders, "ord_missing", ["notes": "x"]),
            ]
            for (collection, id, fields) in attempts {
                do {
                    try await h.engine.update(collection, id: id, fields: fields)
                    Issue.record("accepted: \(collection) \(id) \(fields)")
                } catch is EngineError {}
            }
            for (ticket, content) in [("tkt_1", "   "), ("tkt_missing", "hello")] {
                do {
                    try await h.engine.createTicketMessage(ticketId: ticket, content: content)
                    Issue.record("accepted a message \(content) for \(ticket)")
                } catch is EngineError {}
            }
            #expect(try h.local(Order.self, "ord_1")?.status != .unrecognized("teleported"))
            #expect(try h.engine.pendingChangesCount() == 0)
        }
    }

    @Test("an acknowledged change survives reopening the store, and the reopened engine pushes it once")
    func durableAcrossReopen() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let entry = try await h.engine.update(.orders, id: "ord_3", fields: ["notes": "survives a restart"])
            let reopened = try h.reopenedEngine()
            let entries = try reopened.outboxEntries()
            #expect(entries.map(\.idempotencyKey) == [entry.idempotencyKey])
            #expect(await reopened.sync([]).pushed == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_3").notes == "survives a restart")
        }
    }

    @Test("20 concurrent queueChange calls share commits; each is acknowledged, on disk, and counted")
    func concurrentQueueChange() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let ids = (1...20).map { "ord_\($0)" }
            for id in ids { try h.writeRow("orders", id, ["notes": "counter note for \(id)"]) }

            let results = try await withThrowingTaskGroup(of: LocalChanges.QueueResult.self) { group in
                for id in ids { group.addTask { try await h.engine.queueChange(.orderUpdated, id: id) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 20)
            #expect(results.allSatisfy { if case .queued(_, ["notes"]) = $0 { true } else { false } })
            #expect(await h.engine.status.pending == 20, "the count is current when the last call returns")

            // What was acknowledged is in the file, as a new connection reads it.
            let reopened = try DatabaseQueue(path: h.directory.path("replica.sqlite"))
            let queued = try await reopened.read { db in
                try Row.fetchAll(db, sql: "SELECT record_id, fields FROM outbox ORDER BY record_id")
                    .map { ($0["record_id"] as String, $0["fields"] as String) }
            }
            #expect(queued.map(\.0) == ids.sorted())
            #expect(queued.allSatisfy { $0.1.contains("counter note for \($0.0)") })
            try reopened.close()

            #expect(await h.engine.sync([]).pushed == 20)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_7").notes == "counter note for ord_7")
        }
    }
}
