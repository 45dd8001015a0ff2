import Foundation
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// Scenario 5: what the daemon costs with nothing to do — restarted on the large shop's store, after its start-up
/// run, watched for `idleSeconds`.
extension BenchRun {
    func idle(directory: String, baseURL: String) async throws -> [ResultRow] {
        Log.say("==> idle for \(plan.idleSeconds) s")
        let daemon = try Self.daemon(directory: directory, baseURL: baseURL)
        // As installed: the change stream on (the default), its heartbeats part of the idle cost.
        try daemon.writeConfig("log:\n  level: notice", pageSize: Self.pageSize, events: true)
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        try Self.requireSuccess(try await Self.startAndWaitForFirstRun(daemon).status)
        // Watched from the moment the status is back to `idle` after the start-up run (it says `completed` a moment).
        guard try await daemon.waitForStatus(timeout: 60, { $0["state"]?.stringValue == "idle" }) != nil else {
            throw BenchError("the daemon did not go idle after its start-up run")
        }
        // The server's change stream is open (sync.events is on by default): its heartbeats are part of the cost.
        let events = try await daemon.call("status")["events"]?.stringValue ?? "nil"
        let usage = ProcessStats.Usage(daemon.pid)
        // The RSS before the daemon hands back idle memory (30 s after its last run), then at the end.
        let early = PackageBench.earlySeconds
        sleep(UInt32(early))
        let residentEarly = ProcessStats.residentMiB(daemon.pid)
        sleep(UInt32(max(0, plan.idleSeconds - early)))
        let (cpu, switches, _) = usage.spent()
        let wakeups = Double(switches) / Double(plan.idleSeconds)
        let rss = ProcessStats.residentMiB(daemon.pid)
        let anonymous = ProcessStats.anonymousResidentMiB(daemon.pid)
        let share = cpu / Double(plan.idleSeconds) * 100
        await daemon.stop()
        Log.say(
            "    CPU \(cpu) s, \(wakeups) context switches/s, RSS \(Format.mib(residentEarly)) after \(early) s, \(Format.mib(rss)) at the end"
        )
        return [
            ResultRow(
                scenario: "idle CPU over \(plan.idleSeconds) s (change stream \(events))",
                measured: String(format: "%.2f s (%.3f %% of a core)", cpu, share),
                baseline: String(format: "%.1f context switches/s", wakeups), ratio: "—", target: "< 0.1 % of a core",
                passed: share < 0.1),
            ResultRow(
                scenario: "idle RSS of the dynamic release build (after start-up on the \(plan.orders)-order store)",
                measured: Format.mib(rss),
                baseline:
                    "of which anonymous \(Format.mib(anonymous)), mapped files \(Format.mib(rss - anonymous)); \(Format.mib(residentEarly)) after \(early) s, before idle memory is handed back",
                // Its Swift runtime, Foundation and ICU are the toolchain's shared libraries, which the daemon leaves
                // mapped; issue 20's 25 MiB is for the shipped static build (`scripts/bench --package`).
                ratio: "—", target: "(reported; ≤ 25 MiB on the shipped build: `--package`)", passed: nil),
        ]
    }
}
