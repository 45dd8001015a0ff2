import RepairSyncReliability
import Testing

/// Power cuts at test size (docs/reliability.md, "Power cuts"): the workload's SQLite goes through the crash VFS,
/// which drops, keeps in part or tears the writes not yet synced at a point drawn by the seed. `scripts/soak` cuts
/// at 2,000 points.
@Suite("Reliability: power cuts", .serialized, .timeLimit(.minutes(10)))
struct PowerCutReliabilityTests {
    @Test(
        "80 power cuts during pulls, group-committed bursts and pushes: no acknowledged change lost, store sound, pages and cursors together, converged"
    )
    func powerCuts() async throws {
        let report = try await PowerCut(cuts: 80, seed: 5).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
        #expect(report.figure("acknowledged changes lost")?.value == "0")
        #expect(Int(report.figure("power cuts")?.value ?? "") ?? 0 >= 72)
        #expect(Int(report.figure("acknowledged changes checked")?.value ?? "") ?? 0 > 0)
        #expect(report.figure("pages without their cursor, or cursors without their pages")?.value == "0")
    }

    @Test("the same cuts with synchronous=NORMAL lose acknowledged changes: the scenario can fail")
    func normalSynchronousLoses() async throws {
        let report = try await PowerCut(cuts: 24, seed: 5, synchronous: "normal").run()
        print(ReportTable.text([report]))
        #expect(Int(report.figure("acknowledged changes lost")?.value ?? "") ?? 0 > 0, "\(report.notes)")
        #expect(!report.passed)
    }
}
