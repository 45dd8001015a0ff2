import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl retry [seq...]`.
struct Retry: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Retry dead changes (all, or the ones named by seq).")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Change numbers (seq) from `repairctl pending`.") var ids: [Int64] = []

    func run() throws {
        let reply = try options.call(RPC.Retry.self, .init(ids: ids.isEmpty ? nil : ids))
        if options.printJSONIfAsked(reply.json) { return }
        Output.line("\(reply.result.retried) change(s) queued again")
    }
}
