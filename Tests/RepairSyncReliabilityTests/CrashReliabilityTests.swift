import RepairSyncReliability
import Testing

/// Scenarios 1 and 2 of the reliability suite, at test size: the built daemon killed with SIGKILL during a push
/// and during a large initial pull. `scripts/soak` runs the same scenarios longer.
@Suite("Reliability: crashes", .serialized, .timeLimit(.minutes(5)))
struct CrashReliabilityTests {
    @Test(
        "2,000 changes, 20 SIGKILLs of the daemon during the push: nothing lost, nothing duplicated, store sound, converged"
    )
    func crashDuringPush() async throws {
        let report = try await CrashDuringPush(changes: 2000, kills: 20, seed: 7).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
        #expect(report.figure("changes lost")?.value == "0")
        #expect(report.figure("duplicate writes (server count)")?.value == "0")
        #expect(Int(report.figure("SIGKILLs during the push")?.value ?? "") ?? 0 >= 20)
    }

    @Test(
        "a 11,000-record initial sync, 8 SIGKILLs: at most two pages per collection fetched again per restart (applied + ahead), converged"
    )
    func crashDuringPull() async throws {
        let report = try await CrashDuringPull(orders: 2000, pageSize: 100, kills: 8, seed: 11).run()
        print(ReportTable.text([report]))
        #expect(report.passed, "\(report.notes)")
        #expect(Int(report.figure("SIGKILLs during the pull")?.value ?? "") ?? 0 >= 8)
        #expect(report.figure("records differing from the server")?.value == "0")
    }
}
