import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIConformance
import RepairAPIDev
import RepairSyncModels
import Testing

/// Runs the conformance checks against a development backend seeded for them, and reads its admin surface.
enum ConformanceHarness {
    /// 120 orders give every feed more entries than `pageLimit` (60 clients and tickets at the least), so every
    /// feed spans several pages.
    static let seed = SeedOptions(orders: 120, seedValue: 7)
    static let pageLimit = 40

    /// Records deleted before the run, so that tombstones are in the feeds: an order (with its devices), a ticket
    /// (with its messages) and a client.
    static func deleteSome(_ backend: RunningBackend) async throws {
        for path in ["orders/ord_2", "tickets/tkt_2", "clients/cli_60"] {
            let reply = try await backend.send(.DELETE, "/admin/records/\(path)", token: nil)
            try #require(reply.status == 200, "DELETE \(path): \(reply.text)")
        }
    }

    /// With `creates` (as `--creates`): the run also creates a client, an order and a device.
    static func run(
        _ backend: RunningBackend, only: [String] = [], dryRun: Bool = false, creates: Bool = true,
        pageLimit: Int = ConformanceHarness.pageLimit
    ) async -> (report: ConformanceReport, announced: [String]) {
        try? await quickHeartbeat(backend)
        let options = ConformanceOptions(
            baseURL: backend.baseURL, token: RunningBackend.token, only: only, dryRun: dryRun, creates: creates,
            pageLimit: pageLimit)
        var lines: [String] = []
        let report = await ConformanceRun(options: options).run { lines.append($0) }
        return (report, lines)
    }

    /// A heartbeat every second on the change stream, instead of 15: the run waits for one on a quiet stream.
    static func quickHeartbeat(_ backend: RunningBackend) async throws {
        let reply = try await backend.send(.PUT, "/admin/events", json: #"{"heartbeat_ms":1000}"#, token: nil)
        try #require(reply.status == 200, "PUT /admin/events: \(reply.text)")
    }

    static func setDefects(_ backend: RunningBackend, _ defects: [Defect]) async throws {
        let names = defects.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        let reply = try await backend.send(.PUT, "/admin/defects", json: #"{"defects":[\#(names)]}"#, token: nil)
        try #require(reply.status == 200, "PUT /admin/defects: \(reply.text)")
    }

    /// The id of the record a collection's feed delivers last.
    static func lastRecord(_ backend: RunningBackend, _ collection: String) async throws -> String {
        let page = try await backend.get("/api/v1/\(collection)/changes?limit=1000").object()
        let data = try #require(page["data"] as? [[String: Any]])
        return try #require(data.last?["id"] as? String)
    }

    static func counters(_ backend: RunningBackend) async throws -> [String: Any] {
        try await backend.get("/admin/counters", token: nil).object()
    }

    static func ids(_ results: [CheckResult]) -> Set<String> { Set(results.map(\.id.description)) }

    /// Every check of these clauses, on every collection it is checked on.
    static func checks(_ clauses: String...) -> Set<String> {
        Set(clauses.flatMap { ConformanceCatalog.clause($0)!.checkIDs.map(\.description) })
    }
}
