import RepairSyncReliability
import Testing

/// Scenario 7 of the reliability suite: the store's filesystem full.
@Suite("Reliability: disk full", .timeLimit(.minutes(3)))
struct DiskFullReliabilityTests {
    @Test("disk full: changes refused with a clear error, nothing acknowledged lost, carries on when space returns")
    func diskFull() async throws {
        if let reason = DiskFull.unavailable {
            print("skipped: \(reason)")
            try Test.cancel("\(reason)")
        }
        let report = try await DiskFull(changes: 60).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
    }
}
