import Foundation
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 23: booking repairs in while the internet is down — clients, orders and devices created over the socket,
/// pushed parent-first, exactly once across lost answers and crashes, refused with everything behind them — against
/// real `repairsyncd` and `repair-api-dev` processes.
@Suite("Offline booking", .serialized, .timeLimit(.minutes(3)))
struct OfflineBookingTests {
    static let client = "c0ffee00-0000-4000-8000-000000000001"
    static let order = "c0ffee00-0000-4000-8000-000000000002"
    static let devices = ["c0ffee00-0000-4000-8000-000000000003", "c0ffee00-0000-4000-8000-000000000004"]

    /// createClient, then createOrder with two devices, over the socket; the order as createOrder answered it.
    @discardableResult
    static func bookIn(_ s: HostileStack) async throws -> JSONValue {
        let client = try await s.daemon.call(
            "createClient",
            .object([
                "id": .string(client), "email": .string("walk.in@example.com"), "firstName": .string("Walk"),
                "lastName": .string("In"),
            ]))
        #expect(client["id"]?.stringValue == Self.client)
        return try await s.daemon.call(
            "createOrder",
            .object([
                "id": .string(order), "clientId": .string(Self.client), "notes": .string("quote first"),
                "deposit": .string("20"),
                "devices": .array([
                    .object([
                        "id": .string(devices[0]), "type": .string("phone"), "brand": .string("Apple"),
                        "price": .string("89.50"),
                    ]),
                    .object(["id": .string(devices[1]), "type": .string("laptop"), "issue": .string("no power")]),
                ]),
            ]))
    }

    /// The server's record, or nil (404).
    static func onServer(_ s: HostileStack, _ collection: String, _ id: String) async throws -> [String: Any]? {
        let reply = try await s.admin.send("GET", "/api/v1/\(collection)/\(id)")
        return reply.status == 200 ? try reply.object() : nil
    }

    @Test(
        "booked in with the API stopped, the daemon restarted offline, the API started: everything arrives once, parent first, and the number shows locally"
    )
    func bookInOffline() async throws {
        // The config continues the stack's probe section.
        try await HostileStack.with("offline-booking", config: "  offline_interval: 1s\n") { s in
            try await s.sync()
            let port = s.server.port
            await s.server.stop()
            let booked = try await Self.bookIn(s)
            #expect(booked["order"]?["order_number"] == .null, "pending: no number before the server gives one")
            #expect(booked["order"]?["client_name"]?.stringValue == "Walk In")
            #expect(booked["devices"]?.items?.count == 2)
            #expect(try s.replica("orders", Self.order, "order_number") == .some(nil))
            #expect(try await s.daemon.call("status")["pending"]?.intValue == 4)

            await s.daemon.kill()
            try await s.daemon.start()
            #expect(try await s.daemon.call("status")["pending"]?.intValue == 4, "durable across the restart")
            let shown = try await s.daemon.call("getOrder", .object(["id": .string(Self.order)]))
            #expect(shown["order"]?["order_number"] == .null)

            let restarted = try await APIServerProcess(
                database: s.workspace.file("api.sqlite"), orders: 20, port: port, logPath: s.workspace.file("api-2.log")
            )
            defer { restarted.process.signal(SIGKILL) }
            let drained = try await s.daemon.waitForStatus(timeout: 60) {
                DaemonProcess.drained($0) && $0["online"]?.boolValue == true
            }
            #expect(
                drained != nil,
                "the bookings went out by themselves once the API was back: \(s.daemon.log().suffix(1500))")

            let counters = try await restarted.admin.counters()
            #expect(counters.recordsCreated == ["clients": 1, "orders": 1, "devices": 2], "each created once")
            let client = try #require(try await Self.onServer(s, "clients", Self.client))
            let order = try #require(try await Self.onServer(s, "orders", Self.order))
            let first = try #require(try await Self.onServer(s, "devices", Self.devices[0]))
            let second = try #require(try await Self.onServer(s, "devices", Self.devices[1]))
            // Parent first: the server refuses a child without its parent (and nothing is dead), and each was
            // created after its parent.
            #expect(try s.outbox().isEmpty)
            let created = [client, order, first, second].compactMap { $0["created_at"] as? String }
            #expect(
                created.count == 4 && created[0] <= created[1] && created[1] <= created[2] && created[1] <= created[3])
            let number = try #require(order["order_number"] as? Int)
            #expect(try s.replica("orders", Self.order, "order_number") == .some(String(number)))
            let byNumber = try await s.daemon.call("getOrder", .object(["orderNumber": .number(number)]))
            #expect(byNumber["order"]?["id"]?.stringValue == Self.order)
            #expect(byNumber["devices"]?.items?.count == 2)
        }
    }

    @Test("a lost answer on each create, pushing only: each settled by the replay of its key, created once")
    func lostAnswerOnEachCreateReplayed() async throws {
        try await HostileStack.with("lost-create-answers", config: "retry:\n  base: 1s\n  cap: 2s\n") { s in
            try await s.sync()
            for collection in ["clients", "orders", "devices"] {
                try await s.fault("cut", "POST", "/api/v1/\(collection)", count: collection == "devices" ? 2 : 1)
            }
            _ = try await s.daemon.call("pause")
            try await Self.bookIn(s)
            // Push-only runs (no pull could show the records): a create whose answer was cut is due again after its
            // backoff and goes with the same key.
            let deadline = ContinuousClock.now + .seconds(60)
            func waiting() async throws -> Int {
                let status = try await s.daemon.call("status")
                return (status["pending"]?.intValue ?? 0) + (status["failed"]?.intValue ?? 0)
            }
            while try await waiting() > 0, ContinuousClock.now < deadline {
                _ = try await s.daemon.call("sync", .object(["collections": .array([]), "wait": .bool(true)]))
            }
            let counters = try await s.admin.counters()
            #expect(counters.faultsInjected["cut"] == 4)
            #expect(counters.recordsCreated == ["clients": 1, "orders": 1, "devices": 2], "created once each")
            #expect(counters.idempotentReplays == 4, "each answer came from the replay of its key")
            #expect(try s.outbox().isEmpty)
            #expect(
                try s.replica("orders", Self.order, "order_number") != .some(nil), "the number came with the replay")
        }
    }

    @Test(
        "a lost answer to a create, then a full sync: settled by the record appearing in the feed with the same id (or, when the jitter draws a backoff shorter than the run, by its key's replay), created once, not sent again once settled"
    )
    func lostAnswerSettledByTheFeed() async throws {
        // A long backoff: the in-doubt create is not due again within the run, so what settles it is the pull (the
        // feed path) — on every machine but for the odd draw of the jitter below a second (full jitter from 0).
        try await HostileStack.with("lost-create-feed", config: "retry:\n  base: 10m\n  cap: 20m\n") { s in
            try await s.sync()
            _ = try await s.daemon.call("pause")
            try await s.fault("cut", "POST", "/api/v1/clients")
            let client = try await s.daemon.call(
                "createClient", .object(["id": .string(Self.client), "email": .string("walk.in@example.com")]))
            #expect(client["id"]?.stringValue == Self.client)
            let report = try await s.sync()
            #expect(report["pushFailures"]?.intValue == 1, "\(report)")
            let counters = try await s.admin.counters()
            #expect(counters.faultsInjected["cut"] == 1)
            #expect(counters.recordsCreated == ["clients": 1])
            // A backoff drawn shorter than the run sends it again under its key before the pull shows it: the
            // server answers from the key (a replay), which settles it too — never a second client.
            #expect(counters.idempotentReplays <= 1 && counters.createReplays == 0, "\(counters)")
            #expect(try s.outbox().isEmpty, "the pull that followed showed the client: its create is settled")
            try await s.sync()
            let after = try await s.admin.counters()
            #expect(
                after.recordsCreated == ["clients": 1] && after.idempotentReplays == counters.idempotentReplays
                    && after.createReplays == 0,
                "nothing sent again once settled: \(after)")
            #expect(try s.replica("clients", Self.client, "synced_at") != .some(nil))
        }
    }

    @Test(
        "killed between creates (the order's POST in flight, applied after the kill): after the restart the order is replayed, the devices follow, nothing twice"
    )
    func crashBetweenCreates() async throws {
        try await HostileStack.with("crash-between-creates", config: "retry:\n  base: 1s\n") { s in
            try await s.sync()
            // Slow enough that the kill lands while the request is held, however loaded the machine.
            _ = try await s.admin.send("PUT", "/admin/faults", json: #"{"rate":0,"kinds":{},"slow_ms":8000}"#)
            try await s.fault("slow", "POST", "/api/v1/orders")
            try await Self.bookIn(s)
            _ = try await s.daemon.call("sync")
            #expect(try await s.waitForServer { $0.faultsInjected["slow"] == 1 }, "the order's POST reached the server")
            await s.daemon.kill()
            #expect(try await s.waitForServer { $0.recordsCreated["orders"] == 1 }, "applied after the client died")
            #expect(
                try await s.admin.counters().recordsCreated["devices"] == nil, "no device before its order was answered"
            )
            try await s.daemon.start()
            let drained = try await s.daemon.waitForStatus(timeout: 60) { DaemonProcess.drained($0) }
            #expect(drained != nil)
            let counters = try await s.admin.counters()
            #expect(counters.recordsCreated == ["clients": 1, "orders": 1, "devices": 2])
            #expect(counters.idempotentReplays >= 1, "the order's key was replayed")
            #expect(try s.outbox().isEmpty)
        }
    }

    @Test(
        "a refused client: its order and devices are dead with the reason, visible, nothing sent; retried after the fix, all go in order"
    )
    func refusedClientBlocksTheBooking() async throws {
        try await HostileStack.with("refused-client") { s in
            try await s.sync()
            // Paused: every run below is the test's own (a debounced push would take the fault first under load).
            _ = try await s.daemon.call("pause")
            try await s.fault("422", "POST", "/api/v1/clients")
            try await Self.bookIn(s)
            let report = try await s.sync()
            #expect(report["dead"]?.intValue == 1, "\(report)")
            let dead = try await s.daemon.call("pending", .object(["state": .string("dead")]))
            let entries = dead.items ?? []
            #expect(entries.count == 4)
            #expect(
                entries.first?["lastError"]?.stringValue?.contains("422") == true,
                "the client's create shows the server's refusal: \(dead)")
            #expect(
                entries.dropFirst().allSatisfy {
                    $0["lastError"]?.stringValue?.contains("clients \(Self.client)") == true
                }, "\(dead)")
            #expect(entries.dropFirst().allSatisfy { $0["blockedBy"]?.stringValue == "clients:\(Self.client)" })
            #expect(try await s.daemon.call("status")["dead"]?.intValue == 4)
            #expect(try await s.admin.counters().recordsCreated.isEmpty, "nothing of the booking was sent")
            #expect(try await Self.onServer(s, "orders", Self.order) == nil)
            // Still in the replica, pending.
            #expect(
                try await s.daemon.call("getOrder", .object(["id": .string(Self.order)]))["order"]?["order_number"]
                    == .null)

            let retried = try await s.daemon.call("retry")
            #expect(retried["retried"]?.intValue == 4)
            try await s.sync()
            #expect(try s.outbox().isEmpty)
            #expect(try await s.admin.counters().recordsCreated == ["clients": 1, "orders": 1, "devices": 2])
        }
    }

    @Test(
        "an order just created here is edited on the server while a local edit of it is pending: both reach the server, nothing dead"
    )
    func serverEditOfJustCreatedOrder() async throws {
        try await HostileStack.with("edit-new-order") { s in
            try await s.sync()
            try await Self.bookIn(s)
            try await s.sync()
            let number = try #require(try await Self.onServer(s, "orders", Self.order)?["order_number"] as? Int)
            _ = try await s.daemon.call("pause")
            _ = try await s.updateOrder(Self.order, ["notes": .string("customer called")])
            try await s.admin.edit("orders", Self.order, ["status": "in_progress"])
            let report = try await s.sync()
            #expect(report["dead"]?.intValue == 0, "\(report)")
            let server = try #require(try await Self.onServer(s, "orders", Self.order))
            #expect(server["notes"] as? String == "customer called" && server["status"] as? String == "in_progress")
            #expect(server["order_number"] as? Int == number)
            #expect(try s.replica("orders", Self.order, "status") == .some("in_progress"))
            #expect(try s.replica("orders", Self.order, "notes") == .some("customer called"))
            #expect(try s.outbox().isEmpty)
        }
    }

    @Test(
        "over the socket: a repeated createClient with the same id answers the client; other values are -32002 on id; bad params name themselves"
    )
    func socketIdempotencyAndErrors() async throws {
        try await HostileStack.with("booking-socket") { s in
            try await s.sync()
            // Paused: a debounced push between the two calls would turn the row into the server's copy.
            _ = try await s.daemon.call("pause")
            let params: JSONValue = .object(["id": .string(Self.client), "email": .string("once@example.com")])
            let first = try await s.daemon.call("createClient", params)
            let again = try await s.daemon.call("createClient", params)
            #expect(first == again)
            do {
                _ = try await s.daemon.call(
                    "createClient", .object(["id": .string(Self.client), "email": .string("twice@example.com")]))
                Issue.record("other values under the same id were accepted")
            } catch ControlClient.Failure.rpc(let error) {
                #expect(error.code == -32002 && error.data?["field"]?.stringValue == "id", "\(error)")
            }
            do {
                _ = try await s.daemon.call(
                    "createOrder",
                    .object([
                        "clientId": .string(Self.client), "devices": .array([.object(["kind": .string("phone")])]),
                    ]))
                Issue.record("an unknown device param was accepted")
            } catch ControlClient.Failure.rpc(let error) {
                #expect(error.code == -32602 && error.data?["param"]?.stringValue == "devices", "\(error)")
                #expect(error.message.contains("[0].kind"), "the device and its param are named: \(error.message)")
            }
            // What counts is that the server gets the client once, with the first values.
            try await s.sync()
            #expect(try await s.admin.counters().recordsCreated == ["clients": 1])
            #expect(try await s.serverRecord("clients", Self.client)["email"] as? String == "once@example.com")
            #expect(try await s.daemon.call("status")["pending"]?.intValue == 0)
        }
    }
}

extension JSONValue {
    /// The elements of an array (nil for other values).
    var items: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }
}
