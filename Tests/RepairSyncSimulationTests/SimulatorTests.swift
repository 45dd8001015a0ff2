import Foundation
import RepairSyncProcesses
import RepairSyncSimulation
import Testing

@Suite("Simulator")
struct SimulatorTests {
    @Test("a seed replays exactly: the same operations, the same trace")
    func replaysExactly() async throws {
        let first = await Simulator.run(seed: 42, tracing: true)
        let second = await Simulator.run(seed: 42, tracing: true)
        #expect(first.operations == second.operations)
        #expect(first.trace == second.trace)
        let replayed = await Simulator.replay(seed: 42, operations: first.operations, tracing: true)
        #expect(replayed.trace == first.trace)
    }

    @Test("2,000 seeds: every invariant holds")
    func seeds() async throws {
        let batch = await Simulator.run(seeds: Array(1...2000), parallel: 2)
        print("\(batch.seeds) seeds in \(String(format: "%.1f", batch.seconds)) s")
        for failure in batch.failures.prefix(3) {
            let shrunk = await Simulator.shrink(failure, budget: 150)
            Issue.record(
                "seed \(failure.seed): \(failure.violations.first ?? "")\n\(shrunk.trace.joined(separator: "\n"))")
        }
        #expect(batch.failures.isEmpty, "\(batch.failures.map(\.seed))")
    }

    @Test("repairsync-simulate --minutes runs seeds until its deadline and reports them (it used to crash at once)")
    func runsForMinutes() async throws {
        // Built beside the test bundle by `swift build --build-tests`, as the daemon tests' binaries are.
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("repairsync-simulate")
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
