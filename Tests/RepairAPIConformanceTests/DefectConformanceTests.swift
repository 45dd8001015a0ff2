import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIConformance
import RepairAPIDev
import RepairSyncModels
import Testing

/// Each deliberate defect of repair-api-dev fails exactly the checks of its clause family, and nothing else: the
/// checks find what they claim to, and no defect hides behind another check's noise.
@Suite("Conformance checks against deliberate defects", .serialized)
struct DefectConformanceTests {
    static func expectedFailures(_ defect: Defect) -> Set<String> {
        switch defect {
        // A malformed If-Match is dropped with the rest, so that PATCH is applied instead of refused.
        case .ignoreIfMatch: ConformanceHarness.checks("patch-stale", "patch-malformed-if-match")
        // A create replayed with its key is then sent again as new: 200, not the original 201.
        // A key out of format is dropped too, so that PATCH is applied instead of refused.
        case .forgetIdempotencyKeys:
            ConformanceHarness.checks(
                "idempotent-replay", "idempotency-reuse", "idempotency-key-format", "create-replay")
        case .dropDateHeader: ["date-header"]
        case .floatMoney: ["money"]
        // The first time a cursor is sent the page before it comes again: entries are delivered twice, and the
        // last cursor of a read answers entries already delivered.
        case .repeatPage: ConformanceHarness.checks("feed-unique", "feed-cursor")
        // Entries at page boundaries are never delivered: only reading again through other boundaries shows it.
        case .skipRecords: ConformanceHarness.checks("feed-reread")
        case .createTwice: ConformanceHarness.checks("create-replay")
        case .noHeartbeat: ["events-heartbeat"]
        // Compressed answers still inflate and decode: only the header the clause names is missing.
        case .noVary: ["compression-vary"]
        // The probe's identity and gzip;q=0 requests get gzip; everything else the run reads asked for gzip anyway.
        case .compressAlways: ["compression-unrequested"]
        // Every collection: those with more entries than the run's limit in one read, and the small ones by the
        // probe of limit 1 (with only the pages of the first read, a small tenant passed).
        case .ignoreLimit: ConformanceHarness.checks("feed-limit")
        // Answered as applied (200, version + 1, its ETag): only the value in the answer shows it was not.
        case .dropPatchValues: ConformanceHarness.checks("patch-if-match")
        // Besides the clause itself, every check that decodes records as the daemon does fails where a record the
        // seed gives an empty field is sent: the daemon refuses such a record, so a server sending it cannot pass
        // them. (The seed's ticket messages have no empty field.)
        case .omitNullKeys:
            ConformanceHarness.checks("record-keys", "patch-if-match", "patch-stale", "create-new").union(
                ["orders", "devices", "clients", "tickets"].flatMap { ["feed-paging:\($0)", "record-get:\($0)"] })
        }
    }

    @Test("a defect fails exactly its checks", arguments: Defect.allCases)
    func defectFailsItsChecks(_ defect: Defect) async throws {
        try await RunningBackend.with(seed: ConformanceHarness.seed) { backend in
            try await ConformanceHarness.deleteSome(backend)
            try await ConformanceHarness.setDefects(backend, [defect])
            let (report, _) = await ConformanceHarness.run(backend)
            #expect(ConformanceHarness.ids(report.failed) == Self.expectedFailures(defect), "\(report.text)")
            #expect(report.exitCode == 1)
            // And nothing else hides: every other check passed, as against the sound server, rather than being skipped
            // or left unexercised because of the defect.
            #expect(report.count(.skipped) == 0, "\(report.text)")
            let notExercised = ConformanceHarness.ids(report.results.filter { $0.outcome == .notExercised })
            #expect(notExercised.isSubset(of: ["feed-expired", "rate-limit", "unavailable"]), "\(report.text)")
            for failure in report.failed {
                #expect(!failure.reason.isEmpty)
                #expect(!failure.reason.contains("\n"), "a reason is one line: \(failure.reason)")
            }
        }
    }

    @Test(
        "a tenant smaller than the page limit: a server ignoring limit still fails feed-limit on every collection, by the read of limit 1"
    )
    func ignoredLimitOnASmallTenant() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 20, seedValue: 7)) { backend in
            try await ConformanceHarness.setDefects(backend, [.ignoreLimit])
            // No feed of this shop fills a page of 500: only the read of limit 1 can show the limit ignored.
            let (report, _) = await ConformanceHarness.run(backend, only: ["feed-limit"], pageLimit: 500)
            #expect(
                ConformanceHarness.ids(report.failed) == ConformanceHarness.checks("feed-limit"), "\(report.text)")
        }
    }

    @Test("/admin/defects switches a defect on and off, and refuses a name it does not know")
    func switching() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 3)) { backend in
            let unknown = try await backend.send(.PUT, "/admin/defects", json: #"{"defects":["nope"]}"#, token: nil)
            #expect(unknown.status == 422)
            #expect(try unknown.errorField() == "defects")

            try await ConformanceHarness.setDefects(backend, [.dropDateHeader])
            #expect(try await backend.get("/api/v1/health", token: nil).headers.first(name: "Date") == nil)
            let listed = try await backend.get("/admin/defects", token: nil).object()
            #expect(listed["defects"] as? [String] == ["drop_date_header"])

            let off = try await backend.send(.DELETE, "/admin/defects", token: nil)
            #expect(off.status == 200)
            #expect(try await backend.get("/api/v1/health", token: nil).headers.first(name: "Date") != nil)
        }
    }
}
