import AsyncHTTPClient
import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIDev
import RepairSyncModels
import Testing

/// Authentication, the admin gate and injected faults as a client sees them.
@Suite("Authentication and faults")
struct AuthAndFaultTests {
    @Test("every endpoint but health needs a valid bearer token")
    func authentication() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 2)) { backend in
            let health = try await backend.get("/api/v1/health", token: nil)
            #expect(health.status == 200)
            #expect(try health.object()["status"] as? String == "ok")
            for token in [nil, "wrong-token"] {
                for path in ["/api/v1/orders/changes", "/api/v1/orders/ord_1", "/api/v1/dashboard/stats"] {
                    let response = try await backend.get(path, token: token)
                    #expect(response.status == 401, "\(path) with \(token ?? "no token")")
                    #expect(response.headers.first(name: "WWW-Authenticate") == "Bearer")
                    #expect(try response.errorCode() == "unauthorized")
                }
            }
        }
    }

    @Test("the admin surface does not exist unless enabled")
    func adminGate() async throws {
        try await RunningBackend.with(admin: false) { backend in
            let response = try await backend.get("/admin/counters")
            #expect(response.status == 404)
        }
    }

    @Test("a 429 carries Retry-After, and a request before it elapses is counted as a violation")
    func rateLimit() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 2)) { backend in
            // No random faults; a request arriving after the 429 was sent counts at once. Retry-After is 120 s so that
            // the second request falls within it however slowly a loaded machine runs this test (5 s did not).
            let plan = #"{"rate":0,"kinds":{},"retry_after":120,"in_flight_grace_ms":0}"#
            #expect(try await backend.send(.PUT, "/admin/faults", json: plan).status == 200)
            let queued = try await backend.send(.POST, "/admin/faults/next", json: #"{"kind":"429","count":1}"#)
            #expect(queued.status == 200, "\(queued.text)")
            let limited = try await backend.get("/api/v1/orders/changes")
            #expect(limited.status == 429)
            let seconds = limited.headers.first(name: "Retry-After").flatMap { Int($0) }
            #expect(seconds == 120)
            // Asking again at once ignores Retry-After: the server notices.
            _ = try await backend.get("/api/v1/orders/changes")
            let counters = try await backend.get("/admin/counters").object()
            #expect(counters["retry_after_violations"] as? Int == 1)
        }
    }

    @Test("a cut connection is an error for the client, and truncated JSON does not decode")
    func damagedResponses() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 50)) { backend in
            _ = try await backend.send(.POST, "/admin/faults/next", json: #"{"kind":"cut","path_prefix":"/api/v1/orders"}"#)
            await #expect(throws: (any Error).self) {
                let response = try await backend.get("/api/v1/orders/changes")
                // Some clients report the short body instead of an error: it must then not be valid JSON.
                _ = try JSONDecoder().decode(ChangesPage<Order>.self, from: response.body)
            }
            _ = try await backend.send(
                .POST, "/admin/faults/next", json: #"{"kind":"truncated","path_prefix":"/api/v1/orders"}"#)
            let truncated = try await backend.get("/api/v1/orders/changes")
            #expect(truncated.status == 200)
            #expect(throws: (any Error).self) { try JSONDecoder().decode(ChangesPage<Order>.self, from: truncated.body) }
            // Faults are one-shot: the next request is whole.
            let whole = try await backend.get("/api/v1/orders/changes")
            #expect(try JSONDecoder().decode(ChangesPage<Order>.self, from: whole.body).data.count == 50)
        }
    }

    @Test("a fault plan with the same seed injects the same faults in the same order")
    func deterministicFaults() async throws {
        func run() async throws -> [Int] {
            try await RunningBackend.with(seed: SeedOptions(orders: 2)) { backend in
                let plan = #"{"rate":0.5,"kinds":{"500":1,"503":1,"401":1},"seed":42}"#
                #expect(try await backend.send(.PUT, "/admin/faults", json: plan).status == 200)
                var statuses: [Int] = []
                for _ in 0..<30 { statuses.append(try await backend.get("/api/v1/orders/ord_1").status) }
                return statuses
            }
        }
        let first = try await run()
        #expect(try await run() == first)
        #expect(first.contains(200))
        #expect(first.contains { $0 >= 500 })
        #expect(first.contains(401))
    }
}
