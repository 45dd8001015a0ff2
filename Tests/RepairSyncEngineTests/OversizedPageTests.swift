import BackendTestSupport
import Foundation
import RepairSyncEngine
import RepairSyncModels
import Testing

/// A page of the configured size may be over the size limit for one answer and still within the contract (records
/// with long texts): it is asked for again with fewer records, not refused on every run with its collection stuck.
@Suite("Pages over the size limit", .timeLimit(.minutes(2)))
struct OversizedPageTests {
    @Test("a feed whose pages are over the size limit for one answer is pulled whole in smaller pages")
    func pagesOverTheLimitAreAskedForWithFewerRecords() async throws {
        try await EngineHarness.with { h in
            // A limit a quarter of the orders' first page (every order of the shop fits in one page of 40).
            let page = try await h.backend.get("/api/v1/orders/changes?limit=40")
            let orders = try #require(try page.object()["data"] as? [Any]).count
            let clock = SystemEngineClock()
            let api = APIClient(
                configuration: .init(baseURL: h.backend.baseURL, token: RunningBackend.token), clock: clock,
                transport: HTTPTransport(
                    baseURL: h.backend.baseURL, maxResponseBytes: page.body.count / 4, http: h.backend.client,
                    settings: TransportSettings(caFile: h.backend.caFile)))
            let engine = try SyncEngine(
                store: h.store, api: api, configuration: EngineHarness.configuration(), clock: clock)
            let report = await engine.performFullSync()
            #expect(report.succeeded, "\(report)")
            #expect(try h.integer("SELECT COUNT(*) FROM orders") == orders)
            #expect(orders > 4, "a page of them was over the limit: \(orders)")
        }
    }
}
