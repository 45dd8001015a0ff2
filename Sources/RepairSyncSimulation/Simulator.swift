public import Foundation

/// Runs seeds, replays one, and shrinks a failing one to the shortest list of operations that still fails.
public enum Simulator {
    /// One seed, its operations drawn from the seed.
    public static func run(seed: UInt64, tracing: Bool = false) async -> SimulationResult {
        await execute(seed: seed, script: nil, tracing: tracing)
    }

    /// One seed's settings with a given list of operations (a shrunk list, or a list kept as a regression test).
    public static func replay(seed: UInt64, operations: [SimOperation], tracing: Bool = false) async -> SimulationResult
    {
        await execute(seed: seed, script: operations, tracing: tracing)
    }

    private static func execute(seed: UInt64, script: [SimOperation]?, tracing: Bool) async -> SimulationResult {
        do {
            let simulation = try Simulation(seed: seed, tracing: tracing)
            return await simulation.run(script: script)
        } catch {
            return SimulationResult(
                seed: seed, violations: ["the simulation could not start: \(error)"], operations: [], trace: [],
                coverage: SimCoverage())
        }
    }

    /// Removes operations while the run still fails (delta debugging: halves, quarters, … then one by one), and
    /// returns the shortest failing run found, traced.
    public static func shrink(_ failing: SimulationResult, budget: Int = 400) async -> SimulationResult {
        var operations = failing.operations
        var attempts = 0
        var chunk = max(1, operations.count / 2)
        while chunk >= 1, attempts < budget {
            var start = 0
            var removedAny = false
            while start < operations.count, attempts < budget {
                var candidate = operations
                candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                attempts += 1
                if !(await replay(seed: failing.seed, operations: candidate)).passed {
                    operations = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny || chunk == 1 { chunk /= 2 } else { chunk = max(1, min(chunk, operations.count / 2)) }
        }
        return await replay(seed: failing.seed, operations: operations, tracing: true)
    }

    /// What a batch of seeds found.
    public struct Batch: Sendable {
        public var seeds = 0
        public var failures: [SimulationResult] = []
        public var coverage = SimCoverage()
        public var seconds: Double = 0
    }

    /// Runs `seeds`, `parallel` at a time (each seed is independent and deterministic on its own), until they are
    /// done or `deadline` passes. `onResult` hears of each seed as it ends (a long search that is stopped keeps what
    /// it found).
    public static func run(
        seeds: [UInt64], parallel: Int, deadline: Date? = nil, stopAtFirstFailure: Bool = false,
        onResult: (SimulationResult) -> Void = { _ in }
    ) async -> Batch {
        let started = Date()
        var batch = Batch()
        var remaining = seeds[...]
        await withTaskGroup(of: SimulationResult.self) { group in
            func launch() {
                guard !(stopAtFirstFailure && !batch.failures.isEmpty), let seed = remaining.popFirst(),
                    deadline.map({ Date() < $0 }) ?? true
                else { return }
                group.addTask { await run(seed: seed) }
            }
            for _ in 0..<max(1, parallel) { launch() }
            while let result = await group.next() {
                batch.seeds += 1
                batch.coverage.merge(result.coverage)
                if !result.passed { batch.failures.append(result) }
                onResult(result)
                launch()
            }
        }
        batch.seconds = Date().timeIntervalSince(started)
        return batch
    }
}
