import Foundation
import RepairSyncProcesses
import RepairSyncSimulation
import Testing

@Suite("Simulator")
struct SimulatorTests {
    /// Built beside the test bundle by `swift build --build-tests`, as the daemon tests' binaries are.
    static let simulator = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("repairsync-simulate")

    @Test("a seed replays exactly: the same operations, the same trace")
    func replaysExactly() async throws {
        let first = await Simulator.run(seed: 42, tracing: true)
        let second = await Simulator.run(seed: 42, tracing: true)
        #expect(first.operations == second.operations)
        #expect(first.trace == second.trace)
        let replayed = await Simulator.replay(seed: 42, operations: first.operations, tracing: true)
        #expect(replayed.trace == first.trace)
    }

    /// In a process of its own: the seeds are CPU work on the cooperative pool, and in the test process they held
    /// both of its threads (two cores) for the thirteen minutes they take — every in-process test beside them
    /// (an engine against its backend, the scheduler) waited, and four went past their two minutes in CI. A child
    /// shares the cores through the kernel's scheduler instead. Failing seeds are shrunk and printed by the tool. A
    /// batch that hangs is killed after 40 minutes (over twice the 18 CI took for it), inside CI's 90.
    @Test("2,000 seeds: every invariant holds")
    func seeds() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.simulator.path), "\(Self.simulator.path) is not built")
        let (status, text) = try await ChildProcess.run(
            [Self.simulator.path, "--seeds", "2000", "--first", "1", "--parallel", "2"],
            environment: ProcessInfo.processInfo.environment.merging(["SWIFT_DETERMINISTIC_HASHING": "1"]) { $1 },
            mergeErrors: true, timeout: 2_400)
        let summary = text.split(separator: "\n").first { $0.hasPrefix("2000 seeds in ") }
        print(summary ?? "no summary")
        #expect(status == 0, "\(text.suffix(20_000))")
        #expect(summary?.hasSuffix(" 0 failing") == true, "\(text.suffix(20_000))")
    }

    @Test("repairsync-simulate --minutes runs seeds until its deadline and reports them (it used to crash at once)")
    func runsForMinutes() async throws {
        let binary = Self.simulator
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "\(binary.path) is not built")
        let (status, text) = try await ChildProcess.run(
            [binary.path, "--minutes", "0.05", "--parallel", "1"],
            environment: ProcessInfo.processInfo.environment.merging(["SWIFT_DETERMINISTIC_HASHING": "1"]) { $1 },
            mergeErrors: true)
        #expect(status == 0, "\(text.suffix(2_000))")
        let summary = text.split(separator: "\n").first { $0.contains(" seeds in ") && $0.hasSuffix("0 failing") }
        #expect(summary != nil, "\(text.suffix(2_000))")
    }

    @Test("the seeds that found bugs replay clean", arguments: Simulator.regressions.indices)
    func regression(_ index: Int) async {
        let (seed, bug, operations) = Simulator.regressions[index]
        let result = await Simulator.replay(seed: seed, operations: operations)
        guard !result.violations.isEmpty else { return }
        // Failed: once more with the trace, which says what happened.
        let traced = await Simulator.replay(seed: seed, operations: operations, tracing: true)
        Issue.record("seed \(seed) (\(bug)): \(result.violations)\n\(traced.trace.joined(separator: "\n"))")
    }

    @Test("open bugs the simulator found still fail (known issues, to fix)", arguments: Simulator.openBugs.indices)
    func openBug(_ index: Int) async {
        let (seed, bug, operations) = Simulator.openBugs[index]
        let result = await Simulator.replay(seed: seed, operations: operations)
        withKnownIssue("seed \(seed): \(bug)") {
            #expect(result.violations.isEmpty, "\(result.violations)")
        }
    }
}
