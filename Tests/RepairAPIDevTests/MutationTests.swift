import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIDev
import RepairSyncModels
import Testing

/// PATCH and POST: optimistic concurrency, idempotent replays, validation naming the field.
@Suite("Mutations")
struct MutationTests {
    @Test("If-Match equal to the version applies; a stale If-Match is a 412 carrying the current record")
    func ifMatch() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 5)) { backend in
            let before = try JSONDecoder().decode(Order.self, from: try await backend.get("/api/v1/orders/ord_1").body)
            let applied = try await backend.send(
                .PATCH, "/api/v1/orders/ord_1", json: #"{"status":"in_progress","notes":"screen ordered"}"#,
                headers: [("If-Match", "\"\(before.version)\"")])
            #expect(applied.status == 200, "\(applied.text)")
            let after = try JSONDecoder().decode(Order.self, from: applied.body)
            #expect(after.version == before.version + 1)
            #expect(after.status == .inProgress)
            #expect(after.notes == "screen ordered")
            #expect(applied.headers.first(name: "ETag") == "\"\(after.version)\"")

            let stale = try await backend.send(
                .PATCH, "/api/v1/orders/ord_1", json: #"{"notes":"late"}"#,
                headers: [("If-Match", "\"\(before.version)\"")])
            #expect(stale.status == 412)
            let conflict = try JSONDecoder().decode(VersionConflictBody<Order>.self, from: stale.body)
            #expect(conflict.error.code == "version_mismatch")
            #expect(conflict.current.version == after.version)
            #expect(conflict.current.notes == "screen ordered")
        }
    }

    @Test("a replayed PATCH with the same Idempotency-Key is applied once and answered with the original response")
    func idempotentPatch() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 5)) { backend in
            let key = UUID().uuidString
            let first = try await backend.send(
                .PATCH, "/api/v1/devices/dev_1", json: #"{"diagnosis":"swollen battery"}"#,
                headers: [("Idempotency-Key", key)])
            let second = try await backend.send(
                .PATCH, "/api/v1/devices/dev_1", json: #"{"diagnosis":"swollen battery"}"#,
                headers: [("Idempotency-Key", key)])
            #expect(first.status == 200)
            #expect(second.status == 200)
            #expect(second.body == first.body)
            #expect(second.headers.first(name: "Idempotent-Replayed") == "true")
            #expect(first.headers.first(name: "Idempotent-Replayed") == nil)
            // The same JSON written differently is the same request.
            let respaced = try await backend.send(
                .PATCH, "/api/v1/devices/dev_1", json: "{ \"diagnosis\" :\n \"swollen battery\" }",
                headers: [("Idempotency-Key", key)])
            #expect(respaced.status == 200)
            #expect(respaced.headers.first(name: "Idempotent-Replayed") == "true")
            let current = try await backend.get("/api/v1/devices/dev_1").object()
            let version = try first.object()["version"] as? Int
            #expect(current["version"] as? Int == version)

            let reused = try await backend.send(
                .PATCH, "/api/v1/devices/dev_1", json: #"{"diagnosis":"something else"}"#,
                headers: [("Idempotency-Key", key)])
            #expect(reused.status == 422)
            #expect(try reused.errorCode() == "idempotency_key_reused")

            // Keys belong to a token: another user's identical key is a different request.
            let other = try await backend.send(
                .PATCH, "/api/v1/devices/dev_1", json: #"{"diagnosis":"swollen battery"}"#,
                token: RunningBackend.otherToken, headers: [("Idempotency-Key", key)])
            #expect(other.status == 200)
            #expect(other.headers.first(name: "Idempotent-Replayed") == nil)
        }
    }

    @Test("a replayed message POST creates one message; a reused message id is not created twice")
    func idempotentMessage() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 4)) { backend in
            let ticketBefore = try JSONDecoder().decode(
                Ticket.self, from: try await backend.get("/api/v1/tickets/tkt_1").body)
            let messageId = UUID().uuidString.lowercased()
            let body = #"{"id":"\#(messageId)","content":"Your phone is ready 📱","is_internal":false}"#
            let key = UUID().uuidString
            var responses: [APIResponse] = []
            for _ in 0..<3 {
                responses.append(
                    try await backend.send(
                        .POST, "/api/v1/tickets/tkt_1/messages", json: body, headers: [("Idempotency-Key", key)]))
            }
            #expect(responses.map(\.status) == [201, 201, 201])
            #expect(Set(responses.map(\.body)).count == 1)
            let message = try JSONDecoder().decode(TicketMessage.self, from: responses[0].body)
            #expect(message.id == messageId)
            #expect(message.senderName == "Test Technician")
            #expect(message.content == "Your phone is ready 📱")

            // The same message id under a new key (a client that lost its key) is answered, not duplicated.
            let newKey = try await backend.send(
                .POST, "/api/v1/tickets/tkt_1/messages", json: body, headers: [("Idempotency-Key", UUID().uuidString)])
            #expect(newKey.status == 200)
            let clash = try await backend.send(
                .POST, "/api/v1/tickets/tkt_1/messages",
                json: #"{"id":"\#(messageId)","content":"different text"}"#)
            #expect(clash.status == 409)
            let changed = try await backend.send(
                .POST, "/api/v1/tickets/tkt_1/messages", json: #"{"id":"\#(messageId)","content":"other"}"#,
                headers: [("Idempotency-Key", key)])
            #expect(changed.status == 422)

            let counters = try await backend.get("/admin/counters").object()
            #expect(counters["messages_created"] as? Int == 1)
            #expect((counters["idempotent_replays"] as? Int ?? 0) >= 2)
            let ticketAfter = try JSONDecoder().decode(
                Ticket.self, from: try await backend.get("/api/v1/tickets/tkt_1").body)
            #expect(ticketAfter.messageCount == (ticketBefore.messageCount ?? 0) + 1)
        }
    }

    @Test("an invalid value or field is a 422 that names the field, and changes nothing")
    func validation() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 3)) { backend in
            let before = try await backend.get("/api/v1/orders/ord_1").body
            let cases: [(path: String, json: String, field: String)] = [
                ("/api/v1/orders/ord_1", #"{"status":"teleported"}"#, "status"),
                ("/api/v1/orders/ord_1", #"{"notes":42}"#, "notes"),
                ("/api/v1/orders/ord_1", #"{"notes":"ok","total":"1.00"}"#, "total"),
                ("/api/v1/devices/dev_1", #"{"status":"vaporised"}"#, "status"),
                ("/api/v1/tickets/tkt_1/messages", #"{"id":"not-a-uuid","content":"hi"}"#, "id"),
                ("/api/v1/tickets/tkt_1/messages", #"{"id":"\#(UUID().uuidString)","content":"   "}"#, "content"),
            ]
            for item in cases {
                let method: HTTPMethod = item.path.hasSuffix("messages") ? .POST : .PATCH
                let response = try await backend.send(method, item.path, json: item.json)
                #expect(response.status == 422, "\(item.json): \(response.text)")
                #expect(try response.errorField() == item.field, "\(item.json)")
            }
            #expect(try await backend.get("/api/v1/orders/ord_1").body == before)

            let notJSON = try await backend.send(.PATCH, "/api/v1/orders/ord_1", json: "{not json")
            #expect(notJSON.status == 400)
            let missing = try await backend.send(.PATCH, "/api/v1/orders/ord_nope", json: #"{"notes":"x"}"#)
            #expect(missing.status == 404)
            let badIfMatch = try await backend.send(
                .PATCH, "/api/v1/orders/ord_1", json: #"{"notes":"x"}"#, headers: [("If-Match", "W/\"x\"")])
            #expect(badIfMatch.status == 400)
            // Even a path the router does not know gets the JSON error shape.
            let nowhere = try await backend.get("/api/v1/orders/ord_1/nothing/here")
            #expect(nowhere.status == 404)
            #expect(try nowhere.errorCode() == "not_found")
        }
    }
}
