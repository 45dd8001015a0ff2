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
    /// The backend over HTTP, with `rewrite` applied to the body of each answer with a status in `statuses` (2xx
    /// unless told) to a request that `matches`, marked as an idempotent replay when `replayed`; `route` may send a
    /// request to another path first.
    final class RewritingTransport: APITransport {
        let inner: HTTPTransport
        let route: @Sendable (TransportRequest) -> TransportRequest
        let matches: @Sendable (TransportRequest) -> Bool
        let statuses: Range<Int>
        let replayed: Bool
        let rewrite: @Sendable (inout [String: Any]) -> Void
        let rewritten = Atomic<Int>(0)

        init(
            inner: HTTPTransport, route: @escaping @Sendable (TransportRequest) -> TransportRequest = { $0 },
            matches: @escaping @Sendable (TransportRequest) -> Bool, statuses: Range<Int> = 200..<300,
            replayed: Bool = false, rewrite: @escaping @Sendable (inout [String: Any]) -> Void
        ) {
            self.inner = inner
            self.route = route
            self.matches = matches
            self.statuses = statuses
            self.replayed = replayed
            self.rewrite = rewrite
        }

        func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse {
            var response = try await inner.send(route(request), timeout: timeout)
            guard matches(request), statuses.contains(response.status),
                var object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
            else { return response }
            rewrite(&object)
            if replayed { response.headers.append(("Idempotent-Replayed", "true")) }
            response.body = (try? JSONSerialization.data(withJSONObject: object)) ?? response.body
            response.headers.removeAll { $0.name.lowercased() == "content-length" }
            rewritten.add(1, ordering: .relaxed)
            return response
        }
    }

    static func engine(
        _ h: EngineHarness, _ transport: RewritingTransport,
        configuration: EngineConfiguration = EngineHarness.configuration()
    ) throws -> SyncEngine {
        let clock = SystemEngineClock()
        let api = APIClient(
            configuration: .init(baseURL: h.backend.baseURL, token: RunningBackend.token), clock: clock,
            transport: transport)
        return try SyncEngine(store: h.store, api: api, configuration: configuration, clock: clock)
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
            // One attempt per run (retries an hour apart): the change cannot use up its attempts here.
            let engine = try Self.engine(h, transport, configuration: EngineHarness.hourlyRetries)
            try await engine.update(.orders, id: "ord_1", fields: ["notes": "ours"])
            let report = await engine.sync([])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 1)
            #expect(report.pushed == 0 && report.pushFailures >= 1, "\(report)")
            let entries = try engine.outboxEntries()
            #expect(entries.count == 1 && entries.first?.recordId == "ord_1", "\(entries)")
            #expect(entries.first?.lastError?.contains("answered with record ord_2") == true, "\(entries)")
            #expect(try h.local(Order.self, "ord_2")?.notes == other.notes, "ord_2 took nothing from the answer")
            // The server got the write; the next push, answered truly, settles it (the key replayed) — once its retry
            // is due: two hours on.
            let later = try h.reopenedEngine(
                configuration: EngineHarness.hourlyRetries, clock: SystemEngineClock(skewMilliseconds: 7_200_000))
            #expect(await later.sync([]).pushed == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_1").notes == "ours")
        }
    }

    @Test("a 412 to a PATCH of one order carrying another order's copy: the change stays, the other order is untouched")
    func versionConflictCarryingAnotherRecord() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let other = try #require(try h.local(Order.self, "ord_2"))
            // Another user's edit: ours goes out against the old version and is refused.
            _ = try await h.serverEdit("orders", "ord_1", #"{"notes":"theirs"}"#)
            let transport = RewritingTransport(
                inner: Self.http(h), matches: { $0.method == "PATCH" && $0.path.hasSuffix("/orders/ord_1") },
                statuses: 412..<413,
                rewrite: { body in
                    guard var current = body["current"] as? [String: Any] else { return }
                    current["id"] = "ord_2"
                    current["notes"] = "not ord_2's notes"
                    current["version"] = 99
                    body["current"] = current
                })
            let engine = try Self.engine(h, transport, configuration: EngineHarness.hourlyRetries)
            try await engine.update(.orders, id: "ord_1", fields: ["status": "awaiting_parts"])
            let report = await engine.sync([])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 1)
            #expect(report.pushed == 0, "\(report)")
            let entries = try engine.outboxEntries()
            #expect(entries.map(\.recordId) == ["ord_1"], "\(entries)")
            #expect(entries.first?.lastError?.contains("carried record ord_2") == true, "\(entries)")
            let ord2 = try #require(try h.local(Order.self, "ord_2"))
            #expect(ord2.notes == other.notes && ord2.version == other.version, "ord_2 took nothing from the 412")
            // Answered truly two hours on, the change is rebased on the other user's edit and goes through.
            let later = try h.reopenedEngine(
                configuration: EngineHarness.hourlyRetries, clock: SystemEngineClock(skewMilliseconds: 7_200_000))
            _ = await later.sync([])
            let server = try await h.serverRecord(Order.self, "orders", "ord_1")
            #expect(server.status == .awaitingParts && server.notes == "theirs", "\(server)")
        }
    }

    @Test(
        "a replayed PATCH answer, and the read of the record as it is now answered with another record: the replay settles the change, the other record is untouched"
    )
    func readAfterAReplayAnsweredWithAnotherRecord() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let other = try #require(try h.local(Order.self, "ord_2"))
            // The PATCH's answer is marked a replay, so the record as it is now is read — and that read is answered
            // with ord_2's copy, of another version.
            let transport = RewritingTransport(
                inner: Self.http(h),
                route: { request in
                    guard request.method == "GET", request.path.hasSuffix("/orders/ord_1") else { return request }
                    var another = request
                    another.path = request.path.replacingOccurrences(of: "ord_1", with: "ord_2")
                    return another
                },
                matches: { $0.path.hasSuffix("/orders/ord_1") }, replayed: true,
                rewrite: { object in
                    guard object["id"] as? String == "ord_2" else { return }
                    object["version"] = 1_000
                    object["notes"] = "an impostor"
                })
            let engine = try Self.engine(h, transport)
            try await engine.update(.orders, id: "ord_1", fields: ["notes": "ours"])
            let report = await engine.sync([])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 2, "the PATCH and the read both went by")
            #expect(report.pushed == 1, "\(report)")
            #expect(try engine.outboxEntries().isEmpty)
            #expect(try h.local(Order.self, "ord_1")?.notes == "ours")
            let ord2 = try #require(try h.local(Order.self, "ord_2"))
            #expect(ord2.notes == other.notes && ord2.version == other.version, "ord_2 took nothing from the read")
        }
    }

    @Test(
        "a resync's check of a record the feed did not return, answered with another record: that record is untouched, the mark stays, the collection fails"
    )
    func resyncCheckAnsweredWithAnotherRecord() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await ResyncTests.insertGhost(h)
            let before = try #require(try h.local(Order.self, "ord_2"))
            let transport = RewritingTransport(
                inner: Self.http(h),
                route: { request in
                    guard request.method == "GET", request.path.hasSuffix("/orders/ord_ghost") else { return request }
                    var other = request
                    other.path = request.path.replacingOccurrences(of: "ord_ghost", with: "ord_2")
                    return other
                },
                matches: { $0.path.hasSuffix("/orders/ord_ghost") },
                rewrite: { object in
                    object["notes"] = "an impostor"
                    object["version"] = 99
                })
            let engine = try Self.engine(h, transport)
            let report = await engine.resync([.orders])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 1)
            #expect(!report.succeeded)
            #expect(report.failedCollections["orders"]?.contains("answered with record ord_2") == true, "\(report)")
            #expect(try h.local(Order.self, "ord_2")?.notes == before.notes, "ord_2 took nothing from the answer")
            #expect(try h.local(Order.self, "ord_ghost") != nil, "not judged on another record's answer")
            #expect(try h.integer("SELECT COUNT(*) FROM resync_marks WHERE record_id = 'ord_ghost'") == 1)
        }
    }

    @Test(
        "a feed page with one record twice (against the contract), the second copy older: refused whole, nothing of it taken"
    )
    func pageWithARecordTwice() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try #require(try h.local(Client.self, "cli_1"))
            _ = try await h.serverEdit("clients", "cli_1", #"{"first_name":"Newer"}"#)
            let transport = RewritingTransport(
                inner: Self.http(h), matches: { $0.method == "GET" && $0.path.contains("/clients/changes") },
                rewrite: { page in
                    guard var data = page["data"] as? [[String: Any]], var older = data.first,
                        let version = older["version"] as? Int
                    else { return }
                    older["version"] = version - 1
                    older["first_name"] = "Older"
                    data.append(older)
                    page["data"] = data
                })
            let engine = try Self.engine(h, transport)
            let report = await engine.sync([.clients])
            #expect(transport.rewritten.load(ordering: .relaxed) >= 1)
            #expect(report.failedCollections["clients"]?.contains("appears twice in one page") == true, "\(report)")
            #expect(try h.local(Client.self, "cli_1")?.version == before.version, "nothing of the page was taken")
            // The server's page, as it is: the newer copy.
            #expect(await h.engine.sync([.clients]).succeeded)
            #expect(try h.local(Client.self, "cli_1")?.firstName == "Newer")
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
    @Test(
        "a gateway's JSON 404 of the API's error shape with a code of its own decides nothing: the record stays, the change is retried and goes through"
    )
    func gatewayErrorOfTheAPIsShape() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            // Two PATCHes of ord_5 go to an id no server holds (a real 404 not_found), whose code is then rewritten to
            // a gateway's: {"error":{"code":"ResourceNotFound",…}}; and its message quotes the request's token.
            let gateway = Atomic<Int>(2)
            let transport = RewritingTransport(
                inner: Self.http(h),
                route: { request in
                    guard request.method == "PATCH", request.path.hasSuffix("/orders/ord_5"),
                        gateway.subtract(1, ordering: .relaxed).newValue >= 0
                    else { return request }
                    var elsewhere = request
                    elsewhere.path = request.path.replacingOccurrences(of: "ord_5", with: "ord_nowhere")
                    // The gateway answers itself: nothing of the request reaches the API's memory of keys.
                    elsewhere.headers.removeAll { $0.name == "Idempotency-Key" }
                    return elsewhere
                },
                matches: { $0.method == "PATCH" && $0.path.hasSuffix("/orders/ord_5") }, statuses: 404..<405,
                rewrite: { object in
                    object["error"] = [
                        "code": "ResourceNotFound",
                        "message": "no route for Authorization: Bearer \(RunningBackend.token)",
                    ]
                })
            let engine = try Self.engine(h, transport)
            try await engine.update(.orders, id: "ord_5", fields: ["notes": "past the gateway"])
            let report = await engine.sync([])
            #expect(transport.rewritten.load(ordering: .relaxed) == 2)
            #expect(report.pushed == 1 && report.dead == 0, "\(report)")
            #expect(try h.local(Order.self, "ord_5")?.notes == "past the gateway", "not deleted as gone remotely")
            #expect(try engine.conflicts().isEmpty)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_5").notes == "past the gateway")
        }
    }

    @Test(
        "an error quoting the request's token (a gateway echoing headers): the token is not kept in the change's error")
    func errorQuotingTheToken() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.fault("422", method: "PATCH", path: "/api/v1/orders/ord_6")
            let transport = RewritingTransport(
                inner: Self.http(h), matches: { $0.method == "PATCH" }, statuses: 422..<423,
                rewrite: { object in
                    object["error"] = [
                        "code": "invalid_value", "field": "notes",
                        "message": "refused; you sent Authorization: Bearer \(RunningBackend.token)",
                    ]
                })
            let engine = try Self.engine(h, transport)
            try await engine.update(.orders, id: "ord_6", fields: ["notes": "x"])
            #expect(await engine.sync([]).dead == 1)
            let error = try #require(try engine.outboxEntries().first?.lastError)
            #expect(error.contains("Bearer [token]") && !error.contains(RunningBackend.token), "\(error)")
        }
    }

    @Test(
        "every request asks a cache between to revalidate (Cache-Control and Pragma no-cache): no earlier answer is handed back"
    )
    func requestsRefuseCachedAnswers() async throws {
        try await EngineHarness.with { h in
            let seen = Mutex<[(method: String, cacheControl: String?, pragma: String?)]>([])
            let transport = RewritingTransport(
                inner: Self.http(h),
                matches: { request in
                    let header = { (name: String) in request.headers.first { $0.name == name }?.value }
                    seen.withLock { $0.append((request.method, header("Cache-Control"), header("Pragma"))) }
                    return false
                }, rewrite: { _ in })
            let engine = try Self.engine(h, transport)
            #expect(await engine.performFullSync().succeeded)
            try await engine.update(.orders, id: "ord_3", fields: ["notes": "fresh"])
            #expect(await engine.sync([]).pushed == 1)
            let requests = seen.withLock { $0 }
            #expect(Set(requests.map(\.method)) == ["GET", "PATCH"])
            #expect(requests.allSatisfy { $0.cacheControl == "no-cache" && $0.pragma == "no-cache" })
        }
    }
}
