import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Synchronization
import Testing

/// Issue 23: clients, orders and devices created here — in the replica at once, pushed parent-first, settled exactly
/// once, refused with everything behind them — against repair-api-dev on loopback.
@Suite("Local creates", .timeLimit(.minutes(2)))
struct LocalCreatesTests {
    static let clientId = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
    static let orderId = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    static let deviceIds = ["aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"]

    /// A walk-in: a new client, an order for them, two devices.
    @discardableResult
    static func bookIn(_ engine: SyncEngine) async throws -> (order: Order, devices: [Device]) {
        try await engine.createClient(
            .init(id: clientId, fields: ["email": "walk.in@example.com", "first_name": "Walk", "last_name": "In"]))
        return try await engine.createOrder(
            .init(id: orderId, fields: ["client_id": clientId, "notes": "wants a quote", "deposit": "20.00"]),
            devices: [
                .init(
                    id: deviceIds[0],
                    fields: ["type": "phone", "brand": "Apple", "issue": "cracked screen", "price": "89.5"]),
                .init(id: deviceIds[1], fields: ["type": "laptop", "issue": "no power"]),
            ])
    }

    @Test(
        "a booking is in the replica at once, the order pending (no number); pushed client → order → devices; the number then shows"
    )
    func bookingGoesParentFirst() async throws {
        var configuration = EngineHarness.configuration()
        configuration.pushConcurrency = 8
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let (order, devices) = try await Self.bookIn(h.engine)
            #expect(order.orderNumber == nil && order.displayRef == "#pending")
            #expect(order.clientName == "Walk In" && order.deviceCount == 2 && order.total == Money(exactly: "89.5"))
            #expect(order.balance == Money(exactly: "69.5") && order.deposit == Money(exactly: "20"))
            #expect(devices.map(\.id) == Self.deviceIds)
            #expect(try h.integer("SELECT COUNT(*) FROM orders WHERE order_number IS NULL") == 1)
            #expect(try h.engine.outboxEntries().map(\.kind) == [.create, .create, .create, .create])
            #expect(await h.engine.status.pending == 4)

            let report = await h.engine.sync([])
            #expect(report.pushed == 4, "\(report)")
            // Parent first: each create was sent only after its parent's was accepted.
            let steps = h.recorder.events.compactMap { event -> String? in
                switch event {
                case .sending(_, let collection, _): "send \(collection.name)"
                case .accepted(_, let collection, _): "accept \(collection.name)"
                default: nil
                }
            }
            let acceptedClient = try #require(steps.firstIndex(of: "accept clients"))
            let sentOrder = try #require(steps.firstIndex(of: "send orders"))
            let acceptedOrder = try #require(steps.firstIndex(of: "accept orders"))
            let sentDevices = steps.indices.filter { steps[$0] == "send devices" }
            #expect(
                acceptedClient < sentOrder && sentDevices.count == 2 && sentDevices.allSatisfy { $0 > acceptedOrder },
                "\(steps)")

            let created = try #require(try h.local(Order.self, Self.orderId))
            let server = try await h.serverRecord(Order.self, "orders", Self.orderId)
            #expect(created.orderNumber != nil && created.orderNumber == server.orderNumber)
            #expect(
                server.clientName == "Walk In" && server.notes == "wants a quote"
                    && server.deposit == Money(exactly: "20"))
            #expect(try h.engine.outboxEntries().isEmpty)
            let counters = try await h.counters()
            #expect(counters["records_created"] as? [String: Int] == ["clients": 1, "orders": 1, "devices": 2])
            // The order's derived figures arrive with the next pull (the device creates wrote the order).
            #expect(await h.engine.performFullSync().succeeded)
            let pulled = try #require(try h.local(Order.self, Self.orderId))
            #expect(
                pulled.deviceCount == 2 && pulled.total == Money(exactly: "89.5")
                    && pulled.balance == Money(exactly: "69.5"))
            // getOrder by number finds it.
            let number = try #require(pulled.orderNumber)
            #expect(try h.integer("SELECT COUNT(*) FROM orders WHERE order_number = \(number)") == 1)
        }
    }

    @Test("edits of a record not yet created go into its create: one POST, no PATCH")
    func editsCoalesceIntoTheCreate() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await Self.bookIn(h.engine)
            try await h.engine.update(
                .orders, id: Self.orderId, fields: ["notes": "quote accepted", "status": "in_progress"])
            try await h.engine.update(.devices, id: Self.deviceIds[0], fields: ["diagnosis": "screen and frame"])
            #expect(try h.engine.outboxEntries().count == 4, "no entry of their own")
            #expect(
                try h.engine.outboxEntries().first { $0.recordId == Self.orderId }?.fields["notes"] == "quote accepted")
            #expect(await h.engine.sync([]).pushed == 4)
            let order = try await h.serverRecord(Order.self, "orders", Self.orderId)
            #expect(order.notes == "quote accepted" && order.status == .inProgress)
            #expect(try await h.serverRecord(Device.self, "devices", Self.deviceIds[0]).diagnosis == "screen and frame")
            #expect(try await h.counter("patches_applied") == 0)
        }
    }

    /// Retries ten minutes away: a failed create is not sent again in the same run.
    static var slowRetries: EngineConfiguration {
        var configuration = EngineHarness.configuration()
        configuration.retry = RetryPolicy(base: .seconds(600), cap: .seconds(1200), maxAttempts: 10)
        return configuration
    }

    @Test(
        "an edit made while the create was never sent goes into it; one made while it is in doubt follows it as its own change, sent after it"
    )
    func editWhileCreateInDoubt() async throws {
        try await EngineHarness.with(configuration: Self.slowRetries) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.createClient(.init(id: Self.clientId, fields: ["email": "a@example.com"]))
            try await h.engine.createOrder(.init(id: Self.orderId, fields: ["client_id": Self.clientId]))
            try await h.engine.update(.orders, id: Self.orderId, fields: ["notes": "later"])
            #expect(try h.engine.outboxEntries().count == 2)
            #expect(
                try h.engine.outboxEntries().first { $0.recordId == Self.orderId }?.fields["notes"] == "later",
                "the order's create was never sent: the edit goes into it")
            // The order's create is sent and its answer lost: a later edit goes behind it.
            try await h.fault("cut", method: "POST", path: "/api/v1/orders")
            let first = await h.engine.sync([])
            #expect(
                first.pushed == 1 && first.pushFailures == 1, "the client went; the order's answer was cut: \(first)")
            try await h.engine.update(.orders, id: Self.orderId, fields: ["status": "ready"])
            let orderEntries = try h.engine.outboxEntries().filter { $0.recordId == Self.orderId }
            #expect(orderEntries.map(\.kind) == [.create, .update])
            #expect(orderEntries.first?.fields["status"] == "booked_in", "the sent create's body is unchanged")
            // A restart with quick retries sends the create again (its key) and then the edit.
            let reopened = try h.reopenedEngine()
            let report = await reopened.sync([])
            #expect(report.dead == 0 && report.pushed == 2, "\(report)")
            let server = try await h.serverRecord(Order.self, "orders", Self.orderId)
            #expect(server.notes == "later" && server.status == .ready)
            let counters = try await h.counters()
            #expect((counters["records_created"] as? [String: Int])?["orders"] == 1, "created once")
            #expect(counters["idempotent_replays"] as? Int == 1)
            #expect(try h.engine.outboxEntries().isEmpty)
        }
    }

    @Test("a lost response to a create is settled by the replay of its key: created once")
    func lostResponseReplayed() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("cut", method: "POST", path: "/api/v1/orders")
            try await Self.bookIn(h.engine)
            let run = await h.engine.sync([])
            #expect(run.pushFailures == 1 && run.pushed == 4, "cut, then retried (its key) in the same run: \(run)")
            #expect(try await h.counter("idempotent_replays") == 1)
            let created = try await h.counters()["records_created"] as? [String: Int]
            #expect(created == ["clients": 1, "orders": 1, "devices": 2])
            #expect(try h.local(Order.self, Self.orderId)?.orderNumber != nil)
        }
    }

    @Test(
        "a lost response to a create is settled by the record appearing in the feed; what waited for it goes in the same run"
    )
    func lostResponseSettledByTheFeed() async throws {
        try await EngineHarness.with(configuration: Self.slowRetries) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("cut", method: "POST", path: "/api/v1/clients")
            try await h.engine.createClient(.init(id: Self.clientId, fields: ["email": "feed@example.com"]))
            try await h.engine.createOrder(.init(id: Self.orderId, fields: ["client_id": Self.clientId]))
            // One run: the client's answer is cut (its retry is ten minutes away) and the order waits for it; the pull
            // of clients brings the client, which settles its create, and the order goes before the run ends (not 15
            // minutes later), followed by a pull that brings the server's side of it (the client's order count).
            let run = await h.engine.sync([.clients])
            #expect(run.succeeded && run.pushFailures == 1 && run.pushed == 1, "\(run)")
            #expect(try h.engine.outboxEntries().isEmpty, "the client's create is settled and the order pushed")
            #expect(
                try h.integer("SELECT COUNT(*) FROM clients WHERE id = '\(Self.clientId)' AND synced_at IS NOT NULL")
                    == 1)
            #expect(try h.local(Order.self, Self.orderId)?.orderNumber != nil)
            #expect(try h.integer("SELECT order_count FROM clients WHERE id = '\(Self.clientId)'") == 1)
            let counters = try await h.counters()
            #expect(counters["records_created"] as? [String: Int] == ["clients": 1, "orders": 1])
            #expect(counters["idempotent_replays"] as? Int == 0, "no replay was needed")
            #expect(await h.engine.sync([]).pushed == 0)
        }
    }

    @Test(
        "an order whose create was refused, then brought back by a server restore (applied under an earlier key), is settled by the feed; an edit made after the refusal goes as a change of it (seed 456)"
    )
    func refusedCreateBroughtBackByARestore() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("422", method: "POST", path: "/api/v1/orders")
            try await h.engine.createOrder(
                .init(id: Self.orderId, fields: ["client_id": "cli_1", "notes": "as first sent"]))
            #expect(await h.engine.sync([]).dead == 1)
            // Refused for good on this history: an edit goes into the dead create's body.
            try await h.engine.update(.orders, id: Self.orderId, fields: ["notes": "after the refusal"])

            // The server is restored from a backup that has the order (created there under an earlier key): it comes
            // back through the feed with the server's number.
            var json =
                try JSONSerialization.jsonObject(with: try await h.backend.get("/api/v1/orders/ord_1").body)
                as! [String: Any]
            json["id"] = Self.orderId
            json["order_number"] = 5001
            json["notes"] = "as first sent"
            json["device_count"] = 0
            json["version"] = 1
            try await h.serverRestore("orders", json)

            // The id was made here: the record is ours. The create is settled (nothing dead, nothing sent under that
            // id again), and what it held beyond the server's copy goes as a change of the record, in the same run.
            let run = await h.engine.sync([.orders])
            #expect(run.succeeded && run.pushed == 1, "\(run)")
            let left = try h.engine.outboxEntries()
            #expect(left.isEmpty, "\(left)")
            #expect(await h.engine.status.dead == 0)
            let server = try await h.serverRecord(Order.self, "orders", Self.orderId)
            #expect(server.notes == "after the refusal" && server.orderNumber == 5001)
            #expect(try h.local(Order.self, Self.orderId)?.notes == "after the refusal")
            #expect(try h.local(Order.self, Self.orderId)?.orderNumber == 5001)
        }
    }

    @Test(
        "a refused client makes its order and devices dead with the reason; retry after the fix sends all; discard removes all"
    )
    func refusedCreateBlocksItsDependents() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("422", method: "POST", path: "/api/v1/clients")
            try await Self.bookIn(h.engine)
            let report = await h.engine.sync([])
            #expect(report.dead == 1 && report.pushed == 0, "\(report)")
            let entries = try h.engine.outboxEntries()
            #expect(entries.allSatisfy { $0.state == .dead }, "\(entries)")
            #expect(entries.dropFirst().allSatisfy { $0.blockedBy == "clients:\(Self.clientId)" })
            #expect(entries.dropFirst().allSatisfy { $0.lastError?.contains("clients \(Self.clientId)") == true })
            #expect(await h.engine.status.dead == 4)
            #expect(try await h.serverCounts()["orders"] == 30, "nothing of the booking reached the server")
            // Queueing the rows again sends nothing: the answer says dead and names the change to retry or discard
            // — the client's own (with the server's reason), and for the order its own, waiting for the client's.
            let client = try #require(try h.engine.outboxEntries().first)
            let order = try #require(try h.engine.outboxEntries().first { $0.recordId == Self.orderId })
            let clientAgain = try await h.engine.queueChange(.clientCreated, id: Self.clientId)
            guard case .nothingChanged(.dead(client.seq), let reason) = clientAgain else {
                Issue.record("\(clientAgain)")
                return
            }
            #expect(reason.contains("is dead (") && reason.contains("(change \(client.seq))"), "\(reason)")
            let orderAgain = try await h.engine.queueChange(.orderCreated, id: Self.orderId)
            guard case .nothingChanged(.dead(order.seq), let orderReason) = orderAgain else {
                Issue.record("\(orderAgain)")
                return
            }
            #expect(orderReason.contains("waits for clients:\(Self.clientId), which is dead"), "\(orderReason)")
            // Asked as an edit of the row (unchanged), the same: not "the server's copy" — the server has none.
            let editAgain = try await h.engine.queueChange(.orderUpdated, id: Self.orderId)
            guard case .nothingChanged(.dead(order.seq), _) = editAgain else {
                Issue.record("\(editAgain)")
                return
            }
            #expect(try h.engine.outboxEntries().count == 4)
            // Still in the replica, still pending.
            #expect(try h.local(Order.self, Self.orderId)?.displayRef == "#pending")
            // A new edit of the order waits with it (into its create: never sent).
            try await h.engine.update(.orders, id: Self.orderId, fields: ["notes": "while refused"])
            #expect(try h.engine.outboxEntries().count == 4)

            // Retrying a device retries what it waits for.
            let device = try #require(try h.engine.outboxEntries().first { $0.recordId == Self.deviceIds[1] })
            try await h.engine.retryDead(seq: device.seq)
            #expect(try h.engine.outboxEntries().allSatisfy { $0.state == .pending })
            #expect(await h.engine.sync([]).pushed == 4)
            #expect(try await h.serverRecord(Order.self, "orders", Self.orderId).notes == "while refused")
        }
    }

    @Test("discarding a refused client discards its order and devices, rows and all, each in the audit log")
    func discardCascades() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("422", method: "POST", path: "/api/v1/clients")
            try await Self.bookIn(h.engine)
            #expect(await h.engine.sync([]).dead == 1)
            let client = try #require(try h.engine.outboxEntries().first { $0.collection == .clients })
            try await h.engine.discard(seq: client.seq)
            #expect(try h.engine.outboxEntries().isEmpty)
            #expect(try h.local(Client.self, Self.clientId) == nil && h.local(Order.self, Self.orderId) == nil)
            #expect(try h.integer("SELECT COUNT(*) FROM devices WHERE order_id = '\(Self.orderId)'") == 0)
            #expect(try h.integer("SELECT COUNT(*) FROM conflicts WHERE outcome = 'discarded'") == 4)
            let status = await h.engine.status
            #expect(status.dead == 0 && status.pending == 0)
        }
    }

    @Test(
        "a device booked in on an order another user deleted: the 404 to an edit of the order takes the device's create (refused or not yet sent) to the audit log with it, and the counts follow (seed 370)"
    )
    func parentDeletedWhileChildCreatePending() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let devicesBefore = try h.localCount("devices")
            try await h.engine.update(.orders, id: "ord_5", fields: ["notes": "customer called"])
            let device = try await h.engine.createDevice(
                .init(id: Self.deviceIds[0], fields: ["order_id": "ord_5", "type": "phone", "issue": "no power"]))
            #expect(try h.localCount("devices") == devicesBefore + 1)
            try await h.serverDelete("orders", "ord_5")

            // Push only: the order's PATCH is answered 404 before any pull brings the tombstone (the device's POST, in
            // flight beside it, may be refused first: its order is gone).
            let report = await h.engine.sync([])
            #expect(report.pushed == 0, "\(report)")
            #expect(try h.engine.outboxEntries().isEmpty, "the device's create went with its order")
            #expect(try h.local(Device.self, device.id) == nil)
            #expect(
                try h.integer(
                    "SELECT COUNT(*) FROM conflicts WHERE outcome = 'deleted_remotely' AND record_id = '\(device.id)'")
                    == 1)
            let status = await h.engine.status
            let counted = status.collections.first { $0.collection == .devices }?.records
            #expect(counted == (try h.localCount("devices")))
        }
    }

    @Test(
        "discarding a refused client also takes an order another program inserted under it and never queued: nothing is sent for it later (seed 1289)"
    )
    func discardTakesToolRowsUnderIt() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("422", method: "POST", path: "/api/v1/clients")
            try await Self.bookIn(h.engine)
            #expect(await h.engine.sync([]).dead == 1)
            let toolOrder = "cccccccc-0000-4000-8000-000000000001"
            try await h.store.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO orders (id, order_number, status, client_id, created_at, updated_at, version)
                        VALUES (?, NULL, 'booked_in', ?, '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0)
                        """, arguments: [toolOrder, Self.clientId])
            }
            let client = try #require(try h.engine.outboxEntries().first { $0.collection == .clients })
            try await h.engine.discard(seq: client.seq)
            #expect(try h.local(Order.self, toolOrder) == nil, "the tool's order went with its client")
            #expect(
                try h.integer(
                    "SELECT COUNT(*) FROM conflicts WHERE outcome = 'discarded' AND record_id = '\(toolOrder)'") == 1)
            #expect(try h.engine.outboxEntries().isEmpty)
            // Sent, it would come back 422 (parent_not_found) and lie dead in the outbox.
            let report = await h.engine.sync([])
            #expect(report.pushed == 0 && report.dead == 0 && report.pushFailures == 0, "\(report)")
            #expect(try h.engine.outboxEntries().isEmpty)
        }
    }

    @Test("a device on an order whose create is dead is dead at once, with the reason")
    func childOfDeadCreateIsBlocked() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("422", method: "POST", path: "/api/v1/orders")
            try await h.engine.createOrder(.init(id: Self.orderId, fields: ["client_id": "cli_1"]))
            #expect(await h.engine.sync([]).dead == 1)
            let device = try await h.engine.createDevice(
                .init(id: Self.deviceIds[0], fields: ["order_id": Self.orderId, "type": "tablet"]))
            let entry = try #require(try h.engine.outboxEntries().first { $0.recordId == device.id })
            #expect(
                entry.state == .dead && entry.blockedBy == "orders:\(Self.orderId)"
                    && entry.dependsOn == "orders:\(Self.orderId)")
        }
    }

    @Test("a repeated create with the same id answers the record; with other values it is refused, naming the id")
    func repeatedCreate() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let first = try await h.engine.createClient(.init(id: Self.clientId, fields: ["email": "same@example.com"]))
            let again = try await h.engine.createClient(.init(id: Self.clientId, fields: ["email": "same@example.com"]))
            #expect(first == again)
            await #expect(
                throws: EngineError.invalidValue(
                    field: "id", reason: "client \(Self.clientId) already exists with another email")
            ) {
                try await h.engine.createClient(.init(id: Self.clientId, fields: ["email": "other@example.com"]))
            }
            let (order, devices) = try await h.engine.createOrder(
                .init(id: Self.orderId, fields: ["client_id": Self.clientId]),
                devices: [.init(fields: ["type": "phone"])])
            let (sameOrder, sameDevices) = try await h.engine.createOrder(
                .init(id: Self.orderId, fields: ["client_id": Self.clientId]),
                devices: [.init(fields: ["type": "phone"])])
            #expect(order == sameOrder && devices == sameDevices, "no second device")
            #expect(try h.engine.outboxEntries().count == 3)
        }
    }

    @Test(
        "a create repeated after the server stored its values its own way (trimmed, in lower case) still answers the record; another booking under the id is refused"
    )
    func repeatedCreateAfterTheServerNormalised() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let transport = ForeignAnswerTests.RewritingTransport(
                inner: ForeignAnswerTests.http(h), matches: { $0.method == "POST" },
                rewrite: { object in
                    for key in ["email", "first_name", "content"] {
                        if let text = object[key] as? String {
                            object[key] = text.trimmingCharacters(in: .whitespaces).lowercased()
                        }
                    }
                })
            let engine = try ForeignAnswerTests.engine(h, transport)
            let asked: FieldValues = ["email": "Walk.In@Example.com", "first_name": "  Walk "]
            let messageId = UUID().uuidString.lowercased()
            _ = try await engine.createClient(.init(id: Self.clientId, fields: asked))
            _ = try await engine.createTicketMessage(ticketId: "tkt_1", content: "Ready Friday ", id: messageId)
            #expect(await engine.sync([]).pushed == 2)
            #expect(transport.rewritten.load(ordering: .relaxed) == 2)
            #expect(try h.local(Client.self, Self.clientId)?.email == "walk.in@example.com", "the server's copy")
            // The caller whose replies were lost calls again, as it first did.
            let again = try await engine.createClient(.init(id: Self.clientId, fields: asked))
            #expect(again.email == "walk.in@example.com")
            let message = try await engine.createTicketMessage(
                ticketId: "tkt_1", content: "Ready Friday ", id: messageId)
            #expect(message.content == "ready friday")
            await #expect(throws: EngineError.self, "another booking under the same id") {
                try await engine.createClient(.init(id: Self.clientId, fields: ["email": "someone.else@example.com"]))
            }
            await #expect(throws: EngineError.self, "another message under the same id") {
                try await engine.createTicketMessage(ticketId: "tkt_1", content: "Collected", id: messageId)
            }
            #expect(try engine.outboxEntries().isEmpty, "nothing created twice")
        }
    }

    @Test("bad input is refused before anything is written, naming the field")
    func badInputRefused() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let cases: [(SyncCollection, String?, FieldValues, String)] = [
                (.clients, nil, ["first_name": "No Email"], "email"),
                (.clients, nil, ["email": "not-an-address"], "email"),
                (.clients, "cli_999", ["email": "a@example.com"], "id"),
                (.clients, nil, ["email": "a@example.com", "order_count": "3"], "order_count"),
                (.orders, nil, ["client_id": "cli_1", "status": "teleported"], "status"),
                (.orders, nil, ["client_id": "cli_1", "deposit": "12abc"], "deposit"),
                (.orders, nil, ["client_id": "cli_1", "order_number": "5"], "order_number"),
                (.devices, nil, ["order_id": "ord_1", "type": "   "], "type"),
                (.devices, nil, ["order_id": "ord_1", "type": "phone", "passcode": "1234"], "passcode"),
            ]
            for (collection, id, fields, field) in cases {
                do {
                    switch collection {
                    case .clients: _ = try await h.engine.createClient(.init(id: id, fields: fields))
                    case .orders: _ = try await h.engine.createOrder(.init(id: id, fields: fields))
                    default: _ = try await h.engine.createDevice(.init(id: id, fields: fields))
                    }
                    Issue.record("\(fields) was accepted")
                } catch let error as EngineError {
                    guard case .invalidValue(let named, _) = error else {
                        Issue.record("\(error)")
                        continue
                    }
                    #expect(named == field, "\(fields): \(error)")
                }
            }
            await #expect(throws: EngineError.unknownRecord(collection: "clients", id: "cli_nope")) {
                try await h.engine.createOrder(.init(fields: ["client_id": "cli_nope"]))
            }
            #expect(try h.engine.outboxEntries().isEmpty)
            #expect(try h.integer("SELECT COUNT(*) FROM orders WHERE order_number IS NULL") == 0)
        }
    }

    @Test(
        "rows another program inserts: queueChange queues their creation, parent first; an order number of its own is refused"
    )
    func toolInsertedRows() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.store.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO orders (id, order_number, status, client_id, created_at, updated_at, version)
                        VALUES (?, NULL, 'booked_in', 'cli_2', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0);
                        INSERT INTO devices (id, order_id, type, status, created_at, updated_at, version)
                        VALUES (?, ?, 'phone', 'booked_in', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0);
                        INSERT INTO orders (id, order_number, status, client_id, created_at, updated_at, version)
                        VALUES ('bbbbbbbb-0000-4000-8000-000000000009', 77, 'booked_in', 'cli_2', '2026-11-22T10:00:00.000Z',
                                '2026-11-22T10:00:00.000Z', 0);
                        """, arguments: [Self.orderId, Self.deviceIds[0], Self.orderId])
            }
            // The device first: its order (inserted the same way, not queued yet) is queued before it.
            guard case .queued(_, let fields) = try await h.engine.queueChange(.deviceCreated, id: Self.deviceIds[0])
            else {
                Issue.record("not queued")
                return
            }
            #expect(fields == ["order_id", "status", "type"])
            let entries = try h.engine.outboxEntries()
            #expect(entries.map(\.collection) == [.orders, .devices])
            #expect(entries[1].dependsOn == "orders:\(Self.orderId)")
            guard
                case .alreadyQueued(entries[0].seq, _) = try await h.engine.queueChange(.orderCreated, id: Self.orderId)
            else {
                Issue.record("not answered as the order's create already queued")
                return
            }
            // Asked as an edit of the unchanged row: its create holds it — not "the server's copy".
            guard
                case .alreadyQueued(entries[0].seq, _) = try await h.engine.queueChange(.orderUpdated, id: Self.orderId)
            else {
                Issue.record("an edit of a row created here, unchanged, not answered as its create")
                return
            }
            #expect(try h.engine.outboxEntries().count == 2)
            await #expect(
                throws: EngineError.invalidValue(
                    field: "order_number", reason: "is the server's to assign: an order booked in here leaves it NULL")
            ) {
                try await h.engine.queueChange(.orderCreated, id: "bbbbbbbb-0000-4000-8000-000000000009")
            }
            guard case .nothingChanged(.onServer, _) = try await h.engine.queueChange(.orderCreated, id: "ord_1") else {
                Issue.record("a server record was queued as new")
                return
            }
            try await h.store.write { db in try db.execute(sql: "DELETE FROM orders WHERE order_number = 77") }
            #expect(await h.engine.sync([]).pushed == 2)
            #expect(try await h.serverRecord(Device.self, "devices", Self.deviceIds[0]).orderId == Self.orderId)
        }
    }

    @Test(
        "an edit through the engine of a row another program inserted and never queued queues its creation with the edit: one POST, no PATCH, and a device booked on it follows"
    )
    func engineEditOfAnUnqueuedInsert() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.store.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO orders (id, order_number, status, client_id, created_at, updated_at, version)
                        VALUES (?, NULL, 'booked_in', 'cli_2', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0)
                        """, arguments: [Self.orderId])
            }
            let entry = try await h.engine.update(.orders, id: Self.orderId, fields: ["status": "awaiting_parts"])
            #expect(entry.kind == .create && entry.fields["status"] == .some("awaiting_parts"))
            try await h.engine.createDevice(
                .init(id: Self.deviceIds[0], fields: ["order_id": Self.orderId, "type": "phone"]))
            let entries = try h.engine.outboxEntries()
            #expect(entries.map(\.kind) == [.create, .create] && entries[1].dependsOn == "orders:\(Self.orderId)")
            let report = await h.engine.sync([])
            #expect(report.pushed == 2 && report.dead == 0, "\(report)")
            #expect(try await h.serverRecord(Order.self, "orders", Self.orderId).status == .awaitingParts)
            #expect(try await h.serverRecord(Device.self, "devices", Self.deviceIds[0]).orderId == Self.orderId)
            #expect(try h.engine.outboxEntries().isEmpty)
        }
    }

    @Test(
        "a row another program inserted and never queued is created by the next run; one the server would refuse is left, and said why"
    )
    func unqueuedInsertsArePickedUp() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.store.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO clients (id, email, created_at, updated_at, version)
                        VALUES (?, 'till@example.com', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0);
                        INSERT INTO clients (id, email, created_at, updated_at, version)
                        VALUES ('not-a-uuid', 'bad@example.com', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0);
                        """, arguments: [Self.clientId])
            }
            let report = await h.engine.sync([])
            #expect(report.pushed == 1, "\(report)")
            #expect(try await h.serverRecord(Client.self, "clients", Self.clientId).email == "till@example.com")
            guard case .nothingChanged(.onServer, _) = try await h.engine.queueChange(.clientCreated, id: Self.clientId)
            else {
                Issue.record("queued again")
                return
            }
            await #expect(throws: EngineError.self) { try await h.engine.queueChange(.clientCreated, id: "not-a-uuid") }
        }
    }

    @Test(
        "an id in capitals is refused for a new record, a new message and a row another program inserted, naming its lowercase form: a server keeping UUIDs in lowercase would answer another id"
    )
    func idsInCapitalsAreRefused() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let capitals = Self.clientId.uppercased()
            func expectRefused(_ call: () async throws -> Void) async {
                do {
                    try await call()
                    Issue.record("an id in capitals was taken")
                } catch EngineError.invalidValue(let field, let reason) {
                    #expect(field == "id" && reason.contains(Self.clientId), "\(field): \(reason)")
                } catch {
                    Issue.record("\(error)")
                }
            }
            await expectRefused { _ = try await h.engine.createClient(.init(id: capitals, fields: ["email": "a@b.c"])) }
            await expectRefused {
                _ = try await h.engine.createTicketMessage(ticketId: "tkt_1", content: "Ready", id: capitals)
            }
            try await h.store.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO clients (id, email, created_at, updated_at, version)
                        VALUES (?, 'till@example.com', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0)
                        """, arguments: [capitals])
            }
            await expectRefused { _ = try await h.engine.queueChange(.clientCreated, id: capitals) }
            // Nor does the next run pick the row up: it is left as it is (and logged).
            _ = await h.engine.sync([])
            #expect(try h.engine.outboxEntries().isEmpty, "nothing queued")
            #expect(try h.local(Client.self, Self.clientId) == nil)
            // A message row written in capitals before ids had to be lowercase: queueing it is refused, but a call
            // repeated with its id and values still answers it (a repeat is always safe).
            try await h.store.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO ticket_messages (id, ticket_id, content, sender_type, is_internal, created_at,
                            updated_at, version)
                        VALUES (?, 'tkt_1', 'Written before', 'staff', 0, '2026-11-22T10:00:00.000Z',
                            '2026-11-22T10:00:00.000Z', 0)
                        """, arguments: [capitals])
            }
            await expectRefused { _ = try await h.engine.queueChange(.ticketMessageCreated, id: capitals) }
            let again = try await h.engine.createTicketMessage(
                ticketId: "tkt_1", content: "Written before", id: capitals)
            #expect(again.id == capitals && again.content == "Written before")
            // The lowercase form is taken.
            _ = try await h.engine.createClient(.init(id: Self.clientId, fields: ["email": "a@b.c"]))
            #expect(try h.engine.outboxEntries().map(\.recordId) == [Self.clientId])
        }
    }

    /// Retries an hour apart and the server's edits winning: a create in doubt stays so while the test edits.
    static let serverWinsHourly = EngineConfiguration(
        pageSize: 40, policies: [.orders: .serverWins],
        retry: RetryPolicy(base: .seconds(3600), cap: .seconds(3600), maxAttempts: 10),
        completedHold: .milliseconds(50),
        random: { 1 })

    @Test(
        "a create in doubt, then another user's edit on the server and ours of the same field here: when the feed settles the create, the edit is judged against what the create asked for — not laid over the other user's",
        arguments: [false, true])
    func editAfterACreateInDoubtMeetsAnotherUsersEdit(settledByReply: Bool) async throws {
        try await EngineHarness.with(configuration: Self.serverWinsHourly) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("cut", method: "POST", path: "/api/v1/orders")
            try await Self.bookIn(h.engine)
            #expect(await h.engine.sync([]).pushFailures == 1, "the order's create is in doubt")
            // Made after the create was sent: a change of its own, behind the create.
            try await h.engine.update(.orders, id: Self.orderId, fields: ["notes": "ours"])
            _ = try await h.serverEdit("orders", Self.orderId, #"{"notes":"theirs"}"#)
            // Two hours on: the create's retry is due.
            let later = try h.reopenedEngine(
                configuration: Self.serverWinsHourly, clock: SystemEngineClock(skewMilliseconds: 7_200_000))
            if settledByReply {
                // Sent again once its key is forgotten: the server answers 200, the record as it is now.
                let defects = try await h.backend.send(
                    .PUT, "/admin/defects", json: #"{"defects":["forget_idempotency_keys"]}"#)
                #expect(defects.status == 200)
                _ = await later.sync([])
                _ = try await h.backend.send(.DELETE, "/admin/defects")
            } else {
                // The feed shows the order first (its create's retry is not due on this engine's clock).
                _ = await h.engine.sync([.orders])
            }
            #expect(try h.local(Order.self, Self.orderId)?.notes == "theirs", "the server's edit wins (server-wins)")
            let log = try h.engine.conflicts()
            #expect(log.count == 1 && log.first?.outcome == .keptRemote && log.first?.fields == ["notes"], "\(log)")
            _ = await later.sync([])
            #expect(try await h.serverRecord(Order.self, "orders", Self.orderId).notes == "theirs")
            let left = try h.engine.outboxEntries()
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test(
        "an order created here and acknowledged, then edited on the server while a local edit is pending: merged, both kept"
    )
    func serverEditOfJustCreatedOrder() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(policies: [.orders: .merge])) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await Self.bookIn(h.engine)
            #expect(await h.engine.sync([]).pushed == 4)
            try await h.engine.update(.orders, id: Self.orderId, fields: ["notes": "local note"])
            try await h.serverEdit("orders", Self.orderId, #"{"status":"in_progress"}"#)
            #expect(await h.engine.performFullSync().succeeded)
            #expect(await h.engine.sync([]).dead == 0)
            let server = try await h.serverRecord(Order.self, "orders", Self.orderId)
            #expect(server.notes == "local note" && server.status == .inProgress)
            let local = try #require(try h.local(Order.self, Self.orderId))
            #expect(
                local.notes == "local note" && local.status == .inProgress && local.orderNumber == server.orderNumber)
            #expect(try h.engine.outboxEntries().isEmpty)
        }
    }
}
