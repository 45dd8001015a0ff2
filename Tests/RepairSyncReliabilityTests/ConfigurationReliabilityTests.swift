import RepairSyncReliability
import Testing

/// Scenario 6 of the reliability suite: every configuration key wrong, bad token files, a missing or read-only
/// state directory, a store full of garbage.
@Suite("Reliability: bad configuration and files", .timeLimit(.minutes(3)))
struct ConfigurationReliabilityTests {
    @Test(
        "every key with a wrong type or value exits 78 naming it; bad files get clear errors; a garbage store is kept aside"
    )
    func badConfiguration() async throws {
        let report = try await BadConfiguration().run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
    }
}
