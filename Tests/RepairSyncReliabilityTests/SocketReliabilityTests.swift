import RepairSyncReliability
import Testing

/// Scenario 5 of the reliability suite: hostile input, 1,000 idle connections and slow writers on the daemon's
/// socket, with `status` asked every 20 ms throughout.
@Suite("Reliability: the control socket", .serialized, .timeLimit(.minutes(3)))
struct SocketReliabilityTests {
    @Test(
        "malformed requests get the right JSON-RPC errors; 1,000 idle connections and 50 slow writers lock nobody out of status; memory bounded"
    )
    func socketAbuse() async throws {
        let report = try await SocketAbuse(idleConnections: 1000, slowWriters: 50).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
        #expect(report.figure("status calls not answered (every 20 ms throughout)")?.value == "0")
        #expect(report.figure("daemon crashes")?.value == "0")
    }
}
