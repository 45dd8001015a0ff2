import RepairSyncReliability
import Testing

/// Scenarios 3 and 4 of the reliability suite, at test size: a server failing 30 % of requests while another user
/// edits the same records, and a conflict storm under every policy.
@Suite("Reliability: faults and conflicts", .serialized, .timeLimit(.minutes(5)))
struct FaultReliabilityTests {
    @Test(
        "30 % faults (500, 503, 429, timeouts, cut, truncated) and server edits: all pushed, 0 dead, 0 Retry-After violations, converged"
    )
    func faultyServer() async throws {
        let report = try await FaultyServer(changes: 300, faultRate: 0.3, seed: 5).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
        #expect(report.figure("changes lost")?.value == "0")
        #expect(report.figure("Retry-After violations (server count)")?.value == "0")
        #expect(report.figure("dead changes")?.value == "0")
    }

    @Test(
        "conflict storm: 200 records edited on both sides under each policy (the soak: 500); every outcome as the policy says, all in the audit log"
    )
    func conflictStorm() async throws {
        let report = try await ConflictStorm(records: 200).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
        #expect(report.figures.filter { $0.passed == true }.count == ConflictStorm.policies.count + 1)
    }
}
