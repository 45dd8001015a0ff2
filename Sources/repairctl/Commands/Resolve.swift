import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl resolve <id> --keep local|remote`.
struct Resolve: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resolve", abstract: "Decide an open conflict.")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The conflict's id from `repairctl conflicts`.") var id: Int64
    @Option(help: "Which side's values to keep.") var keep: ConflictChoice.Side

    func run() throws {
        let reply = try options.call(
            RPC.ResolveConflict.self, .init(id: id, keep: keep == .local ? .keepLocal : .keepRemote))
        if options.printJSONIfAsked(reply.json) { return }
        Output.line("conflict \(id) resolved: kept \(keep.rawValue)")
    }
}
