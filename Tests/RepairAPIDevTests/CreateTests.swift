import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIDev
import RepairSyncModels
import Testing

/// docs/api.md section 4.7: clients, orders and devices created with client-generated ids.
@Suite("Creates")
struct CreateTests {
    static let client = "0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"
    static let order = "1d2e3f4a-5b6c-4d7e-8f90-a1b2c3d4e5f6"
    static let device = "2e3f4a5b-6c7d-4e8f-90a1-b2c3d4e5f6a7"

    static func post(_ backend: RunningBackend, _ collection: String, _ json: String, key: String? = nil) async throws
        -> APIResponse
    {
        try await backend.send(
            .POST, "/api/v1/\(collection)", json: json, headers: key.map { [("Idempotency-Key", $0)] } ?? [])
    }

    @Test(
        "a client, an order and a device are created with their ids; the server sets the number, names, counts and totals"
    )
    func createsBooking() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 5)) { backend in
            let highest =
                try await (1...5).asyncMap { n in
                    try JSONDecoder().decode(Order.self, from: try await backend.get("/api/v1/orders/ord_\(n)").body)
                        .orderNumber ?? 0
                }.max() ?? 0
            let client = try await Self.post(
                backend, "clients",
                #"{"id":"\#(Self.client)","email":"ada@example.com","first_name":"Ada","last_name":"Lovelace"}"#)
            #expect(client.status == 201, "\(client.text)")
            #expect(client.headers.first(name: "ETag") == "\"1\"")
            let created = try JSONDecoder().decode(Client.self, from: client.body)
            #expect(created.id == Self.client && created.version == 1 && created.orderCount == 0)

            let order = try await Self.post(
                backend, "orders",
                #"{"id":"\#(Self.order)","client_id":"\#(Self.client)","deposit":"20.00","notes":"quote first","location_id":"loc_2"}"#
            )
            #expect(order.status == 201, "\(order.text)")
            let newOrder = try JSONDecoder().decode(Order.self, from: order.body)
            #expect(newOrder.orderNumber == highest + 1)
            #expect(newOrder.clientName == "Ada Lovelace" && newOrder.clientEmail == "ada@example.com")
            #expect(newOrder.locationName == "Station Road" && newOrder.deposit == Money(exactly: "20"))
            #expect(newOrder.status == .bookedIn && newOrder.deviceCount == 0 && newOrder.total == nil)
            let clientAfter = try JSONDecoder().decode(
                Client.self, from: try await backend.get("/api/v1/clients/\(Self.client)").body)
            #expect(clientAfter.orderCount == 1 && clientAfter.version == 2, "the order's create wrote its client")

            let device = try await Self.post(
                backend, "devices", #"{"id":"\#(Self.device)","order_id":"\#(Self.order)","type":"phone","price":89.5}"#
            )
            #expect(device.status == 201, "\(device.text)")
            #expect(try JSONDecoder().decode(Device.self, from: device.body).price == Money(exactly: "89.5"))
            let orderAfter = try JSONDecoder().decode(
                Order.self, from: try await backend.get("/api/v1/orders/\(Self.order)").body)
            #expect(orderAfter.deviceCount == 1 && orderAfter.total == Money(exactly: "89.5"))
            #expect(orderAfter.balance == Money(exactly: "69.5") && orderAfter.version == 2)

            // The feeds carry the new records and their parents' new versions.
            let orders =
                try await backend.get("/api/v1/orders/changes?limit=1000").object()["data"] as? [[String: Any]] ?? []
            #expect((orders.last?["id"] as? String) == Self.order)
            let counters = try await backend.get("/admin/counters").object()
            #expect(counters["records_created"] as? [String: Int] == ["clients": 1, "orders": 1, "devices": 1])
        }
    }

    @Test(
        "the same id with the same body answers the record (200); with another body 409; an idempotent replay answers 201 again"
    )
    func repeatedIds() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 3)) { backend in
            let body = #"{"id":"\#(Self.client)","email":"same@example.com"}"#
            let key = UUID().uuidString
            let first = try await Self.post(backend, "clients", body, key: key)
            #expect(first.status == 201)
            let replay = try await Self.post(backend, "clients", body, key: key)
            #expect(replay.status == 201 && replay.headers.first(name: "Idempotent-Replayed") == "true")
            let again = try await Self.post(
                backend, "clients", #"{ "email" : "same@example.com", "id":"\#(Self.client)" }"#)
            #expect(again.status == 200)
            #expect(
                try JSONDecoder().decode(Client.self, from: again.body)
                    == JSONDecoder().decode(Client.self, from: first.body))
            let other = try await Self.post(
                backend, "clients", #"{"id":"\#(Self.client)","email":"other@example.com"}"#)
            #expect(try other.status == 409 && (other.errorCode()) == "duplicate_id" && (other.errorField()) == "id")
            let seeded = try await Self.post(backend, "orders", #"{"id":"ord_1","client_id":"cli_1"}"#)
            #expect(try seeded.status == 422 && (seeded.errorField()) == "id", "a server id is not a UUID")
            let counters = try await backend.get("/admin/counters").object()
            #expect(counters["records_created"] as? [String: Int] == ["clients": 1])
            #expect(counters["create_replays"] as? Int == 1)
        }
    }

    @Test("a missing parent is 422 parent_not_found naming the field; a deleted id is never used again")
    func parentsAndDeletedIds() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 3)) { backend in
            let orphan = try await Self.post(backend, "orders", #"{"id":"\#(Self.order)","client_id":"cli_nope"}"#)
            #expect(
                try orphan.status == 422 && (orphan.errorCode()) == "parent_not_found"
                    && (orphan.errorField()) == "client_id")
            let device = try await Self.post(
                backend, "devices", #"{"id":"\#(Self.device)","order_id":"\#(Self.order)","type":"phone"}"#)
            #expect(try device.status == 422 && (device.errorField()) == "order_id")

            #expect(
                try await Self.post(backend, "orders", #"{"id":"\#(Self.order)","client_id":"cli_1"}"#).status == 201)
            #expect(try await backend.send(.DELETE, "/admin/records/orders/\(Self.order)").status == 200)
            let again = try await Self.post(backend, "orders", #"{"id":"\#(Self.order)","client_id":"cli_1"}"#)
            #expect(try again.status == 409 && (again.errorCode()) == "duplicate_id")
        }
    }

    @Test("what is the server's, unknown keys and bad values are refused, naming the field")
    func validation() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 3)) { backend in
            let cases: [(String, String, Int, String, String)] = [
                ("clients", #"{"id":"\#(Self.client)"}"#, 422, "invalid_value", "email"),
                ("clients", #"{"id":"\#(Self.client)","email":"no-at-sign"}"#, 422, "invalid_value", "email"),
                ("clients", #"{"email":"a@example.com"}"#, 422, "invalid_value", "id"),
                (
                    "clients", #"{"id":"\#(Self.client)","email":"a@example.com","order_count":3}"#, 422,
                    "invalid_field", "order_count"
                ),
                (
                    "orders", #"{"id":"\#(Self.order)","client_id":"cli_1","order_number":5}"#, 422, "invalid_field",
                    "order_number"
                ),
                (
                    "orders", #"{"id":"\#(Self.order)","client_id":"cli_1","status":"teleported"}"#, 422,
                    "invalid_value", "status"
                ),
                (
                    "orders", #"{"id":"\#(Self.order)","client_id":"cli_1","deposit":"-5"}"#, 422, "invalid_value",
                    "deposit"
                ),
                (
                    "orders", #"{"id":"\#(Self.order)","client_id":"cli_1","location_id":"loc_99"}"#, 422,
                    "invalid_value", "location_id"
                ),
                (
                    "orders", #"{"id":"\#(Self.order)","client_id":"cli_1","colour":"red"}"#, 422, "invalid_field",
                    "colour"
                ),
                ("devices", #"{"id":"\#(Self.device)","order_id":"ord_1","type":" "}"#, 422, "invalid_value", "type"),
                (
                    "devices", #"{"id":"\#(Self.device)","order_id":"ord_1","type":"phone","price":"1e3"}"#, 422,
                    "invalid_value", "price"
                ),
                ("devices", #"{"id":"\#(Self.device)","order_id":"ord_1","type":7}"#, 422, "invalid_value", "type"),
            ]
            for (collection, body, status, code, field) in cases {
                let reply = try await Self.post(backend, collection, body)
                #expect(
                    try reply.status == status && (reply.errorCode()) == code && (reply.errorField()) == field,
                    "\(collection) \(body): \(reply.status) \(reply.text)")
            }
            #expect(try await Self.post(backend, "clients", "[1]").status == 400)
            #expect(try await Self.post(backend, "tickets", #"{"id":"\#(Self.client)"}"#).status == 405)
            let counters = try await backend.get("/admin/counters").object()
            #expect((counters["records_created"] as? [String: Int] ?? [:]).isEmpty)
        }
    }

    @Test("fault injection applies to creates: a cut answer after the create was applied; the replay answers it")
    func cutCreate() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 3)) { backend in
            let plan = #"{"kind":"cut","method":"POST","path_prefix":"/api/v1/clients","count":1}"#
            #expect(try await backend.send(.POST, "/admin/faults/next", json: plan).status == 200)
            let key = UUID().uuidString
            let body = #"{"id":"\#(Self.client)","email":"cut@example.com"}"#
            _ = try? await Self.post(backend, "clients", body, key: key)
            #expect(try await backend.get("/api/v1/clients/\(Self.client)").status == 200, "applied before the cut")
            let replay = try await Self.post(backend, "clients", body, key: key)
            #expect(replay.status == 201 && replay.headers.first(name: "Idempotent-Replayed") == "true")
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var values: [T] = []
        for element in self { values.append(try await transform(element)) }
        return values
    }
}
