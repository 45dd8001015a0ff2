import ArgumentParser
import Foundation
import RepairSyncSimulation

/// `repairsync-simulate`: runs seeds of the deterministic simulator (docs/reliability.md, "The simulator"), or
/// replays one with a readable trace. Exit 1 when a seed breaks an invariant; a failing seed is shrunk and printed.
@main
struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairsync-simulate",
        abstract: "Runs the sync engine's deterministic simulator over seeds, or replays one seed.")

    @Option(help: "How many seeds to run (from --first).")
    var seeds: Int = 2000

    @Option(help: "The first seed of the range.")
    var first: UInt64 = 1

    @Option(help: "Replay this one seed with its trace (shrunk when it fails).")
    var seed: UInt64?

    @Option(help: "Run seeds for this many minutes instead of a fixed count.")
    var minutes: Double?

    @Option(help: "Seeds run at once.")
    var parallel: Int = ProcessInfo.processInfo.activeProcessorCount

    @Flag(help: "Print the coverage (operations, deliveries, crash points, outcomes).")
    var coverage = false

    @Flag(help: "List every failing seed with its first violation (no shrinking).")
    var list = false

    @Flag(help: "Stop at the first failing seed found.")
    var stopAtFirst = false

    @Option(
        help: ArgumentHelp(
            "Write the figures into this Markdown file, between its simulator markers.", valueName: "path"))
    var writeDoc: String?

    @Option(
        help: ArgumentHelp(
            "Save the batch's progress in this file as it goes, and take it up from there when run again with the same build (a batch of hours in several sittings).",
            valueName: "path"))
    var checkpoint: String?

    @Option(
        help: ArgumentHelp(
            "Identify this build by ID in the checkpoint instead of by its executable (scripts/simulate passes a hash of the sources it is built from, so a checkpoint carries over to the same sources built on another machine).",
            valueName: "id"))
    var buildID: String?

    @Flag(help: "Replay the shrunk operation lists of the seeds that found bugs (Simulator.regressions) instead.")
    var regressions = false

    @Option(
        help: ArgumentHelp(
            "Replay the kept list of this seed (Simulator.regressions or .openBugs) with its trace.", valueName: "seed")
    )
    var regression: UInt64?

    func run() async throws {
        if let regression {
            guard let kept = (Simulator.regressions + Simulator.openBugs).first(where: { $0.seed == regression }) else {
                throw ValidationError("no regression list is kept for seed \(regression)")
            }
            let result = await Simulator.replay(seed: kept.seed, operations: kept.operations, tracing: true)
            print(result.trace.joined(separator: "\n"))
            print(
                "regression of seed \(kept.seed): \(result.violations.first.map { "FAILED: \($0)" } ?? "passed") — the bug: \(kept.bug)"
            )
            if !result.passed { throw ExitCode(1) }
            return
        }
        if regressions {
            var failed = 0
            for (seed, bug, operations) in Simulator.regressions {
                let result = await Simulator.replay(seed: seed, operations: operations)
                if let violation = result.violations.first {
                    failed += 1
                    print("regression of seed \(seed) FAILED: \(violation) — the bug: \(bug)")
                } else {
                    print("regression of seed \(seed): passed")
                }
            }
            print("\(Simulator.regressions.count) regressions, \(failed) failing")
            if failed > 0 { throw ExitCode(1) }
            return
        }
        if let seed {
            let result = await Simulator.run(seed: seed, tracing: true)
            if result.passed {
                print(result.trace.joined(separator: "\n"))
                print("seed \(seed): passed (\(result.operations.count) operations)")
                return
            }
            try await report(result)
        }
        // With --minutes, the deadline ends the batch: the list only has to outlast it (no machine runs 500 seeds a
        // second), without materialising an endless range.
        let count = minutes.map { max(1, Int($0 * 60 * 500)) } ?? seeds
        let deadline = minutes.map { Date().addingTimeInterval($0 * 60) }
        var saved: SimCheckpoint?
        if let checkpoint {
            var loaded = try SimCheckpoint.load(
                path: checkpoint,
                build: buildID.map { "sources \($0)" } ?? SimCheckpoint.build(executable: CommandLine.arguments[0]),
                first: first,
                count: count)
            loaded.sittings += 1
            if loaded.seedsDone > 0 {
                print(
                    "taking up \(checkpoint): \(loaded.seedsDone) of \(count) seeds done in \(loaded.sittings - 1) sitting(s), \(loaded.failures.count) failing"
                )
            }
            saved = loaded
        }
        let started = Date()
        var lastSave = Date()
        let ran = await Simulator.run(
            seeds: saved?.remaining ?? Array(first..<(first + UInt64(count))),
            parallel: parallel, deadline: deadline, stopAtFirstFailure: stopAtFirst
        ) { [list, checkpoint] result in
            if list, let violation = result.violations.first {
                // As each ends: a search that is stopped keeps what it found. (The sorted list follows at the end.)
                FileHandle.standardOutput.write(Data("failing: seed \(result.seed): \(violation)\n".utf8))
            }
            guard let checkpoint, saved != nil else { return }
            saved!.record(result)
            if Date().timeIntervalSince(lastSave) >= 30 {
                var snapshot = saved!
                snapshot.seconds += Date().timeIntervalSince(started)
                try? snapshot.save(path: checkpoint)
                lastSave = Date()
            }
        }
        var batch = ran
        if var total = saved, let checkpoint {
            total.seconds += ran.seconds
            try total.save(path: checkpoint)
            batch = total.batch
        }
        print(
            "\(batch.seeds) seeds in \(String(format: "%.1f", batch.seconds)) s "
                + "(\(String(format: "%.1f", Double(batch.seeds) / max(batch.seconds, 0.001))) seeds/s), "
                + "\(batch.failures.count) failing"
                + ((saved?.sittings ?? 1) > 1 ? " (in \(saved!.sittings) sittings)" : ""))
        if coverage { print(Self.describe(batch.coverage)) }
        if let writeDoc {
            try Self.write(
                batch, first: first, sittings: saved?.sittings ?? 1, bySources: buildID != nil, into: writeDoc)
        }
        if list {
            for failure in batch.failures.sorted(by: { $0.seed < $1.seed }) {
                print("seed \(failure.seed): \(failure.violations.first ?? "")")
            }
            if !batch.failures.isEmpty { throw ExitCode(1) }
        }
        // A failure from an earlier sitting kept only its seed: run it again (a seed replays exactly) to shrink it.
        if let first = batch.failures.min(by: { $0.seed < $1.seed }) {
            try await report(first.operations.isEmpty ? await Simulator.run(seed: first.seed) : first)
        }
    }

    private func report(_ failing: SimulationResult) async throws {
        let shrunk = await Simulator.shrink(failing)
        print(shrunk.trace.joined(separator: "\n"))
        print("seed \(failing.seed) FAILED: \(failing.violations.first ?? "")")
        print(
            "shrunk from \(failing.operations.count) to \(shrunk.operations.count) operations; replay: scripts/simulate --seed \(failing.seed)"
        )
        print("as a regression test: Simulator.replay(seed: \(failing.seed), operations: [")
        for operation in shrunk.operations { print("    \(operation.swiftLiteral),") }
        print("])")
        throw ExitCode(1)
    }

    /// Replaces what lies between `<!-- simulate:begin -->` and `<!-- simulate:end -->` with this batch's figures.
    static func write(_ batch: Simulator.Batch, first: UInt64, sittings: Int, bySources: Bool, into path: String) throws
    {
        var text = try String(contentsOfFile: path, encoding: .utf8)
        guard let begin = text.range(of: "<!-- simulate:begin -->"), let end = text.range(of: "<!-- simulate:end -->")
        else { throw ValidationError("\(path) has no <!-- simulate:begin --> … <!-- simulate:end --> markers") }
        let environment = ProcessInfo.processInfo.environment
        func rows(_ counts: [String: Int]) -> String {
            counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        let date = ISO8601DateFormatter().string(from: Date())
        #if DEBUG
            let build = "debug build"
        #else
            let build = "release build"
        #endif
        let figures = """

            Run of \(date) on commit \(environment["SOAK_COMMIT"] ?? "unknown") (\(environment["SOAK_MACHINE"] ?? "this machine"), \(build)):
            **\(batch.seeds) seeds** from seed \(first) in \(Int(batch.seconds)) s\(sittings > 1 ? " (in \(sittings) sittings, \(bySources ? "builds of the same sources" : "the same build") throughout)" : "") — \(String(format: "%.1f", Double(batch.seeds) / max(batch.seconds, 0.001))) seeds/s —
            **\(batch.failures.count) failing**\(batch.failures.isEmpty ? "" : " (first: \(batch.failures.map(\.seed).min()!))").

            | reached | counts over all seeds |
            | --- | --- |
            | operations | \(rows(batch.coverage.operations)) |
            | deliveries | \(rows(batch.coverage.deliveries)) |
            | crash points | \(rows(batch.coverage.crashes)) |
            | policies (seeds) | \(rows(batch.coverage.policies)) |
            | engine outcomes | \(rows(batch.coverage.outcomes)) |
            | runs | \(batch.coverage.runs) |

            """
        text.replaceSubrange(begin.upperBound..<end.lowerBound, with: figures)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func describe(_ coverage: SimCoverage) -> String {
        func table(_ title: String, _ counts: [String: Int]) -> String {
            title + ": " + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        return [
            table("operations", coverage.operations), table("deliveries", coverage.deliveries),
            table("crash points", coverage.crashes), table("policies", coverage.policies),
            table("engine outcomes", coverage.outcomes),
            "runs: \(coverage.runs)",
        ].joined(separator: "\n")
    }
}
