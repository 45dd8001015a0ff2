import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl stats`: how well sync has been doing, over the daemon's lifetime and the last 24 hours.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync success rate, durations, conflicts, pushes and pulls, HTTP responses.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let stats = try options.call("stats")
        if options.printJSONIfAsked(stats) { return }
        func cell(_ value: JSONValue?) -> String { Output.cell(value).isEmpty ? "-" : Output.cell(value) }
        func counts(_ value: JSONValue?) -> String {
            guard case .object(let members)? = value, !members.isEmpty else { return "-" }
            return members.map { "\($0.key) \(Output.cell($0.value))" }.joined(separator: ", ")
        }
        let rows: [(String, String)] = [
            ("runs", "runs"), ("successes", "successes"), ("failures", "failures"), ("success rate", "successRate"),
            ("average duration (ms)", "averageDurationMs"), ("last duration (ms)", "lastDurationMs"),
            ("conflicts", "conflicts"), ("conflicts per run", "conflictRate"),
        ]
        Output.table(
            ["", "last 24 h", "since start"],
            rows.map { [$0.0, cell(stats["last24h"]?[$0.1]), cell(stats["lifetime"]?[$0.1])] }
                + [
                    ["pushed", counts(stats["last24h"]?["pushed"]), counts(stats["lifetime"]?["pushed"])],
                    ["pulled", counts(stats["last24h"]?["pulled"]), counts(stats["lifetime"]?["pulled"])],
                ], width: 80)
        print("")
        print("conflict outcomes (audit log): \(counts(stats["conflictOutcomes"]))")
        print("HTTP responses since start: \(counts(stats["httpResponses"]))")
    }
}
