import ConformanceTestSupport
import Foundation
import RepairAPIConformance
import Testing

/// A server written apart from repair-api-dev that differs only where the contract allows — bare integer cursors,
/// pages shorter than the limit, money as JSON numbers with exact digits, extra keys, statuses the daemon does not
/// know, timestamps in another offset — conforms.
@Suite("Conformance of a server that differs only where the contract allows")
struct VariantConformanceTests {
    @Test("every check a client can provoke passes, tombstones included")
    func variantConforms() async throws {
        try await VariantServer.with { baseURL in
            var announced: [String] = []
            let report = await ConformanceRun(
                options: .init(baseURL: baseURL + "/api/v1/", token: VariantServer.token, creates: true, pageLimit: 25)
            ).run { announced.append($0) }
            #expect(report.failed.isEmpty, "\(report.text)")
            #expect(report.exitCode == 0)
            let notExercised = Set(report.results.filter { $0.outcome == .notExercised }.map(\.id.description))
            // It does not compress (so nothing can lack Vary), and has no change stream (GET /api/v1/events answers 404): both optional, so
            // reported as not exercised, never failed.
            #expect(
                notExercised
                    == [
                        "feed-expired", "rate-limit", "unavailable", "compression", "compression-vary", "events-open",
                        "events-heartbeat",
                        "events-change", "events-reset", "events-auth",
                    ], "\(report.text)")
            #expect(report.count(.skipped) == 0, "\(report.text)")
            // Its pages are at most 7 entries, so each feed took several pages even at limit 25.
            let paging = report.results.first { $0.id.description == "feed-paging:devices" }
            #expect(paging?.reason.contains("pages of limit 25") == true, "\(paging?.reason ?? "")")
            #expect(announced.contains { $0.hasPrefix("  orders ord_v19:") }, "\(announced)")
        }
    }
}
