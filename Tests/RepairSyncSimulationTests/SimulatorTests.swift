import Foundation
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
}
