import BackendTestSupport
import Foundation
import RepairSyncEngine
import RepairSyncModels
import Synchronization
import Testing

/// A page of the configured size may be over the size limit for one answer and still within the contract (records
/// with long texts): it is asked for again with fewer records, not refused on every run with its collection stuck.
@Suite("Pages over the size limit", .timeLimit(.minutes(2)))
struct OversizedPageTests {
    /// The backend over HTTP with a small limit for one answer, noting each orders feed request: its `limit`, and
    /// whether its answer was over the limit.
    final class NotingTransport: APITransport {
        let inner: HTTPTransport
        let requests = Mutex<[(limit: Int, tooLarge: Bool)]>([])

        init(_ inner: HTTPTransport) { self.inner = inner }

        func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse {
            let limit =
                request.path.hasPrefix("/api/v1/orders/changes")
                ? URLComponents(string: request.path)?.queryItems?.first { $0.name == "limit" }?.value.flatMap {
                    Int($0)
                }
                : nil
            do {
                let response = try await inner.send(request, timeout: timeout)
                if let limit { requests.withLock { $0.append((limit, false)) } }
                return response
            } catch {
                if let limit, case .tooLarge = error { requests.withLock { $0.append((limit, true)) } }
                throw error
            }
        }
    }

    @Test(
        "a feed whose pages are over the size limit for one answer is pulled whole: the page halved until one fits, and kept at that size"
    )
    func pagesOverTheLimitAreAskedForWithFewerRecords() async throws {
        try await EngineHarness.with { h in
            // A limit a quarter of the orders' first page (every order of the shop fits in one page of 40).
            let page = try await h.backend.get("/api/v1/orders/changes?limit=40")
            let orders = try #require(try page.object()["data"] as? [Any]).count
            #expect(orders > 8, "several pages at a quarter of the size: \(orders)")
            let transport = NotingTransport(
                HTTPTransport(
                    baseURL: h.backend.baseURL, maxResponseBytes: page.body.count / 4, http: h.backend.client,
                    settings: TransportSettings(caFile: h.backend.caFile)))
            let clock = SystemEngineClock()
            let api = APIClient(
                configuration: .init(baseURL: h.backend.baseURL, token: RunningBackend.token), clock: clock,
                transport: transport)
            let engine = try SyncEngine(
                store: h.store, api: api, configuration: EngineHarness.configuration(), clock: clock)
            let report = await engine.performFullSync()
            #expect(report.succeeded, "\(report)")
            #expect(try h.integer("SELECT COUNT(*) FROM orders") == orders)
            // Refused at 40, halved until a page fits, then every later page asked for at that size: the refusals
            // all come first, each at half the one before.
            let requests = transport.requests.withLock { $0 }
            let refused = requests.prefix { $0.tooLarge }
            let taken = requests.dropFirst(refused.count)
            #expect(refused.first?.limit == 40 && !refused.isEmpty, "\(requests)")
            #expect(zip(refused, refused.dropFirst()).allSatisfy { $1.limit == $0.limit / 2 }, "\(requests)")
            #expect(taken.count >= 2 && taken.allSatisfy { !$0.tooLarge }, "\(requests)")
            #expect(Set(taken.map(\.limit)) == [(refused.last?.limit ?? 0) / 2], "kept small: \(requests)")
        }
    }
}
