import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIConformance
import RepairAPIDev
import RepairSyncEngine
import Synchronization
import Testing

/// The clauses a client cannot provoke are judged when the server gives them: here repair-api-dev is made to
/// answer a 429 and to expire every cursor in the middle of a read, and those checks pass instead of staying
/// "not exercised".
@Suite("Clauses only the server can provoke")
struct ObservedClauseTests {
    @Test("a 429 and cursors expired mid-read are checked when they occur, and pass against repair-api-dev")
    func observedWhenTheyOccur() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            let queued = try await backend.send(
                .POST, "/admin/faults/next",
                json: #"{"kind":"429","method":"GET","path_prefix":"/api/v1/clients/changes","count":1}"#, token: nil)
            try #require(queued.status == 200, "\(queued.text)")
            // The 4th request with a cursor is the second page of the orders feed's first read (the clients feed
            // sent 3 before it: one in its read, two sent again).
            try await ConformanceHarness.quickHeartbeat(backend)
            let transport = ExpiringCursors(backend: backend, afterCursorRequests: 4)
            let report = await ConformanceRun(
                options: .init(
                    baseURL: backend.baseURL, token: RunningBackend.token, pageLimit: ConformanceHarness.pageLimit),
                transport: transport
            ).run()
            #expect(transport.expired, "the cursors were never expired")
            #expect(report.failed.isEmpty, "\(report.text)")
            let rateLimit = report.results.first { $0.id.clause == "rate-limit" }
            #expect(rateLimit?.outcome == .passed, "\(rateLimit?.reason ?? "")")
            let expired = report.results.first { $0.id.clause == "feed-expired" }
            #expect(expired?.outcome == .passed, "\(expired?.reason ?? "")")
        }
    }

    @Test("a Retry-After given as an HTTP date, on a 429 and on a 503, is read as the daemon reads it and waited out")
    func retryAfterAsDate() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            // The server's clock runs two minutes ahead, so its dates only make sense against its own Date header
            // (as the daemon reads them): read against this machine's clock they would ask for 121 s, longer than the
            // tool waits, and both checks would fail.
            let plan = try await backend.send(
                .PUT, "/admin/faults",
                json: #"{"rate":0,"kinds":{},"retry_after":1,"retry_after_date":true,"clock_skew_ms":120000}"#,
                token: nil)
            try #require(plan.status == 200, "\(plan.text)")
            for (kind, path) in [("429", "/api/v1/clients/changes"), ("503_retry_after", "/api/v1/orders/changes")] {
                let queued = try await backend.send(
                    .POST, "/admin/faults/next",
                    json: #"{"kind":"\#(kind)","method":"GET","path_prefix":"\#(path)","count":1}"#, token: nil)
                try #require(queued.status == 200, "\(queued.text)")
            }
            let (report, _) = await ConformanceHarness.run(backend, only: ["4.2", "6"])
            #expect(report.failed.isEmpty, "\(report.text)")
            for clause in ["rate-limit", "unavailable"] {
                let result = report.results.first { $0.id.clause == clause }
                #expect(result?.outcome == .passed, "\(clause): \(result?.reason ?? "not run")")
                #expect(result?.reason.contains("1 in an HTTP date") == true, "\(clause): \(result?.reason ?? "")")
            }
        }
    }

    @Test("a 503 without Retry-After is tried again after a pause, and the check that met it passes")
    func unavailableWithoutRetryAfter() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            let queued = try await backend.send(
                .POST, "/admin/faults/next",
                json: #"{"kind":"503","method":"GET","path_prefix":"/api/v1/orders/changes","count":1}"#, token: nil)
            try #require(queued.status == 200, "\(queued.text)")
            let (report, _) = await ConformanceHarness.run(backend, only: ["4.2", "6"])
            #expect(report.failed.isEmpty, "\(report.text)")
            let unavailable = report.results.first { $0.id.clause == "unavailable" }
            #expect(unavailable?.outcome == .passed, "\(unavailable?.reason ?? "not run")")
            #expect(unavailable?.reason.contains("1 in no Retry-After") == true, "\(unavailable?.reason ?? "")")
        }
    }

    /// Every request answered 429: without a bound on the run's waits, each request the run makes waits out three
    /// Retry-Afters (up to two minutes each). With `--max-wait 0` nothing is waited out, and the checks say why.
    @Test("a server that answers 429 to everything: past --max-wait refusals are not waited out, and say so")
    func rateLimitedForever() async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            let plan = try await backend.send(
                .PUT, "/admin/faults", json: #"{"rate":1,"kinds":{"429":1},"retry_after":1}"#, token: nil)
            try #require(plan.status == 200, "\(plan.text)")
            let report = await ConformanceRun(
                options: .init(
                    baseURL: backend.baseURL, token: RunningBackend.token, pageLimit: ConformanceHarness.pageLimit,
                    maxWait: .zero)
            ).run()
            #expect(report.exitCode == 1)
            let rateLimit = report.results.first { $0.id.clause == "rate-limit" }
            #expect(rateLimit?.outcome == .failed, "\(report.text)")
            #expect(rateLimit?.reason.contains("--max-wait") == true, "\(rateLimit?.reason ?? "")")
        }
    }
}

/// The HTTP transport, which expires every cursor on the server (`POST /admin/cursors/expire`) once, just before
/// the n-th request that sends a cursor: that request and the read it belongs to meet a 410.
final class ExpiringCursors: APITransport {
    private let inner: HTTPTransport
    private let backend: RunningBackend
    private let remaining: Mutex<Int>
    private let done = Mutex(false)

    init(backend: RunningBackend, afterCursorRequests count: Int) {
        self.inner = HTTPTransport(baseURL: backend.baseURL)
        self.backend = backend
        self.remaining = Mutex(count)
    }

    var expired: Bool { done.withLock { $0 } }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse {
        let due =
            request.path.contains("/changes?") && request.path.contains("cursor=")
            && remaining.withLock { remaining in
                remaining -= 1
                return remaining == 0
            }
        if due {
            let reply = try? await backend.send(.POST, "/admin/cursors/expire", token: nil)
            done.withLock { $0 = reply?.status == 200 }
        }
        return try await inner.send(request, timeout: timeout)
    }
}
