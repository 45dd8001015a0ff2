import RepairSyncReliability
import Testing

/// The fuzzers at test size (20,000 inputs per decoder); the soak runs them for minutes.
@Suite("Reliability: fuzzing", .timeLimit(.minutes(3)))
struct FuzzReliabilityTests {
    @Test("20,000 mutated requests and changes pages: no crash, every reply one well-formed JSON-RPC response")
    func fuzz() async throws {
        let report = try await Fuzz(iterations: 20_000, seed: 2026).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
    }
}
