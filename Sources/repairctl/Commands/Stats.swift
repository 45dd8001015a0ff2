import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl stats`: how well sync has been doing, over the daemon's lifetime and the last 24 hours.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Sync success rate, durations, conflicts, pushes and pulls, HTTP responses.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let reply = try options.call(RPC.Stats.self)
        if options.printJSONIfAsked(reply.json) { return }
        let (day, life) = (reply.result.last24h, reply.result.lifetime)
        func text<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "-" }
        func counts(_ values: [String: Int]) -> String {
            values.isEmpty
                ? "-" : values.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        let rows: [[String]] = [
            ["runs", text(day.runs), text(life.runs)],
            ["successes", text(day.successes), text(life.successes)],
            ["failures", text(day.failures), text(life.failures)],
            ["success rate", text(day.successRate), text(life.successRate)],
            ["average duration (ms)", text(day.averageDurationMs), text(life.averageDurationMs)],
            ["last duration (ms)", text(day.lastDurationMs), text(life.lastDurationMs)],
            ["conflicts", text(day.conflicts), text(life.conflicts)],
            ["conflicts per run", text(day.conflictRate), text(life.conflictRate)],
            ["pushed", counts(day.pushed), counts(life.pushed)],
            ["pulled", counts(day.pulled), counts(life.pulled)],
        ]
        Output.table(["", "last 24 h", "since start"], rows, width: 80)
        Output.line("")
        Output.line("conflict outcomes (audit log): \(counts(reply.result.conflictOutcomes))")
        Output.line("HTTP responses since start: \(counts(reply.result.httpResponses))")
    }
}
