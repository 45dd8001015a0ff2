import ArgumentParser
import Foundation
import RepairSyncReliability

/// `repairsync-soak`: runs every reliability scenario at soak size against the built binaries, prints the table,
/// optionally writes it into docs/reliability.md, and exits non-zero when any figure misses its target (a lost or
/// duplicated change above all).
@main
struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairsync-soak",
        abstract: "Run the reliability scenarios at soak size and print the table.",
        discussion: "The binaries are taken from the folder of this program (or REPAIRSYNC_BIN).")

    @Flag(help: "Test sizes instead of soak sizes (a few minutes).")
    var quick = false

    @Option(
        help: ArgumentHelp(
            "Only these scenarios (comma-separated): \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "names"))
    var only: String?

    @Option(help: "Seed of the random choices (kill points, edits, fuzz inputs).")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Write the table into this Markdown file, between its soak markers.", valueName: "path"))
    var writeDoc: String?

    @Option(help: "Power cuts in the power-cut scenario (150 quick, 2000 at soak size).")
    var cuts: Int?

    @Option(
        help: ArgumentHelp(
            "The power-cut workload program to run (a mutant's build; scripts/mutants/power-cut).", valueName: "path"))
    var powerCutHelper: String?

    enum Scenario: String, CaseIterable {
        case crashPush = "crash-push"
        case crashPull = "crash-pull"
        case faults, conflicts, socket, config
        case diskFull = "disk-full"
        case load, fuzz
        case powerCut = "power-cut"
    }

    func run() async throws {
        let selected =
            try only.map { text in
                try text.split(separator: ",").map { name in
                    guard let scenario = Scenario(rawValue: String(name)) else {
                        throw ValidationError("unknown scenario \(name)")
                    }
                    return scenario
                }
            } ?? Scenario.allCases
        var reports: [ScenarioReport] = []
        for scenario in selected {
            say("== \(scenario.rawValue)")
            do {
                let report = try await run(scenario)
                say(ReportTable.text([report]))
                for note in report.notes { say("   note: \(note)") }
                reports.append(report)
            } catch {
                var failed = ScenarioReport(scenario: scenario.rawValue)
                defer { for note in failed.notes { say("   note: \(note)") } }
                // One line for the table; the whole message (with the log's end) goes below it.
                failed.add(
                    .check(
                        "ran to the end", false,
                        String("\(error)".split(separator: "\n").first ?? "").prefix(160).description))
                failed.notes.append("\(error)")
                say(ReportTable.text([failed]))
                reports.append(failed)
            }
        }
        say("\n" + ReportTable.text(reports))
        if let writeDoc { try write(reports, into: writeDoc) }
        guard reports.allSatisfy(\.passed) else {
            say("\nFAILED: \(reports.filter { !$0.passed }.map(\.scenario).joined(separator: ", "))")
            throw ExitCode.failure
        }
        say("\nall scenarios passed")
    }

    func run(_ scenario: Scenario) async throws -> ScenarioReport {
        switch scenario {
        case .crashPush: return try await CrashDuringPush(changes: 2000, kills: quick ? 20 : 200, seed: seed).run()
        case .crashPull:
            return try await CrashDuringPull(
                orders: quick ? 2000 : 20_000, pageSize: quick ? 100 : 500, kills: quick ? 8 : 20, seed: seed
            ).run()
        case .faults: return try await FaultyServer(changes: quick ? 300 : 2000, seed: seed).run()
        case .conflicts: return try await ConflictStorm(records: quick ? 200 : 500).run()
        case .socket: return try await SocketAbuse().run()
        case .config: return try await BadConfiguration().run()
        case .diskFull:
            if let reason = DiskFull.unavailable {
                var report = ScenarioReport(scenario: "disk full")
                report.add(Figure("skipped", reason))
                return report
            }
            return try await DiskFull(changes: quick ? 60 : 400).run()
        case .load: return try await Load(clients: 50, seconds: quick ? 10 : 60, orders: quick ? 2000 : 5000).run()
        case .fuzz: return try await Fuzz(seconds: quick ? 10 : 120, seed: seed).run()
        case .powerCut:
            return try await PowerCut(cuts: cuts ?? (quick ? 150 : 2000), seed: seed, helper: powerCutHelper).run()
        }
    }

    /// Replaces what lies between `<!-- soak:begin -->` and `<!-- soak:end -->` with the date, commit, machine and
    /// table of this run.
    func write(_ reports: [ScenarioReport], into path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let begin = text.range(of: "<!-- soak:begin -->"), let end = text.range(of: "<!-- soak:end -->") else {
            throw ValidationError("\(path) has no <!-- soak:begin --> … <!-- soak:end --> markers")
        }
        let environment = ProcessInfo.processInfo.environment
        let formatter = ISO8601DateFormatter()
        let header = """

            Last run: \(formatter.string(from: Date())) on commit `\(environment["SOAK_COMMIT"] ?? "unknown")`, \
            \(environment["SOAK_MACHINE"] ?? "\(ProcessInfo.processInfo.activeProcessorCount) cores"), \
            \(quick ? "quick (test) sizes" : "soak sizes"), seed \(seed), \
            \(Int(reports.reduce(0) { $0 + $1.seconds } / 60)) min in all. \
            Result: \(reports.allSatisfy(\.passed) ? "every figure met its target" : "FAILED: \(reports.filter { !$0.passed }.map(\.scenario).joined(separator: ", "))").

            \(ReportTable.markdown(reports))

            """
        try (String(text[..<begin.upperBound]) + header + String(text[end.lowerBound...])).write(
            toFile: path, atomically: true, encoding: .utf8)
    }
}

/// Writes a line at once, unbuffered even into a file or a pipe: a soak is watched while it runs.
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
