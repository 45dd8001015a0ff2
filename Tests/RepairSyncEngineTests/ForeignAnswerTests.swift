import BackendTestSupport
import Foundation
import RepairSyncEngine
import RepairSyncModels
import Synchronization
import Testing

/// A 2xx whose body is about another record than the one written — a server's bug, a cache or a proxy between —
/// settles nothing: the change stays in the outbox, retried under its key, and no other record's copy is taken from it.
@Suite("Answers about another record", .timeLimit(.minutes(2)))
struct ForeignAnswerTests {
    /// The backend over HTTP, with `rewrite` applied to the body of each 2xx answer to a request that `matches`.
    final class RewritingTransport: APITransport {
        let inner: HTTPTransport
        let matches: @Sendable (TransportRequest) -> Bool
        let rewrite: @Sendable (inout [String: Any]) -> Void
        let rewritten = Atomic<Int>(0)

        init(
            inner: HTTPTransport, matches: @escaping @Sendable (TransportRequest) -> Bool,
            rewrite: @escaping @Sendable (inout [String: Any]) -> Void
        ) {
            self.inner = inner
            self.matches = matches
            self.rewrite = rewrite
        }

        func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse {
            var response = try await inner.send(request, timeout: timeout)
            guard matches(request), (200..<300).contains(response.status),
                var object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
            else { return response }
            rewrite(&object)
            response.body = (try? JSONSerialization.data(withJSONObject: object)) ?? response.body
            response.headers.removeAll { $0.name.lowercased() == "content-length" }
            rewritten.add(1, ordering: .relaxed)
            return response
        }
    }

    static func engine(_ h: EngineHarness, _ transport: RewritingTransport) throws -> SyncEngine {
        let clock = SystemEngineClock()
        let api = APIClient(
            configuration: .init(baseURL: h.backend.baseURL, token: RunningBackend.token), clock: clock,
            transport: transport)
        return try SyncEngine(store: h.store, api: api, configuration: EngineHarness.configuration(), clock: clock)
    }

    static func http(_ h: EngineHarness) -> HTTPTransport {
        HTTPTransport(
            baseURL: h.backend.baseURL, http: h.backend.client, settings: TransportSettings(caFile: h.backend.caFile))
    }

    @Test("a PATCH of one order answered with another order's copy: the change stays, the other order is untouched")
    func patchAnsweredWithAnotherRecord() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let other = try #require(try h.local(Order.self, "ord_2"))
            let transport = RewritingTransport(
                inner: Self.http(h), matches: { $0.method == "PATCH" && $0.path.hasSuffix("/orders/ord_1") },
                rewrite: { object in
                    object["id"] = "ord_2"
                    object["notes"] = "not ord_2's notes"
                })
            let engine = try Self.engine(h, transport)
            try await engine.update(.orders, id: "ord_1", fields: ["notes": "ours"])
            let report = await engine.sync([])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 1)
            #expect(report.pushed == 0 && report.pushFailures >= 1, "\(report)")
            let entries = try engine.outboxEntries()
            #expect(entries.count == 1 && entries.first?.recordId == "ord_1", "\(entries)")
            #expect(entries.first?.lastError?.contains("answered with record ord_2") == true, "\(entries)")
            #expect(try h.local(Order.self, "ord_2")?.notes == other.notes, "ord_2 took nothing from the answer")
            // The server got the write; the next push, answered truly, settles it (the key replayed).
            #expect(await h.engine.sync([]).pushed == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_1").notes == "ours")
        }
    }

    @Test(
        "a message created on a ticket answered with another id (or another ticket): the message stays queued, not taken for another"
    )
    func messageAnsweredWithAnotherId() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let transport = RewritingTransport(
                inner: Self.http(h), matches: { $0.method == "POST" && $0.path.hasSuffix("/messages") },
                rewrite: { object in object["id"] = (object["id"] as? String)?.uppercased() })
            let engine = try Self.engine(h, transport)
            let id = UUID().uuidString.lowercased()
            try await engine.createTicketMessage(ticketId: "tkt_1", content: "Ready Friday", id: id)
            let report = await engine.sync([])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 1)
            #expect(report.pushed == 0 && report.pushFailures >= 1, "\(report)")
            let entries = try engine.outboxEntries()
            #expect(entries.map(\.recordId) == [id], "\(entries)")
            #expect(entries.first?.lastError?.contains("answered with record \(id.uppercased())") == true, "\(entries)")
            #expect(try h.local(TicketMessage.self, id.uppercased()) == nil, "no second message under the other id")
        }
    }
}
