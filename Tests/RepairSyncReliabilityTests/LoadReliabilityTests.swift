import RepairSyncReliability
import Testing

/// Scenario 9 of the reliability suite, at test size: 50 clients for 10 s while full resyncs run (the soak: 60 s).
@Suite("Reliability: load", .timeLimit(.minutes(3)))
struct LoadReliabilityTests {
    @Test("50 clients changing and reading status for 10 s during full resyncs: no error, every change on the server")
    func load() async throws {
        let report = try await Load(clients: 50, seconds: 10, orders: 2000).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
        #expect(report.figure("errors")?.value == "0")
    }
}
