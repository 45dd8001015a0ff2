import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl discard <seq>`: give up a dead change for good.
struct Discard: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discard",
        abstract: "Give up a dead change for good (the record shows the server's values again).",
        discussion:
            "The change's values stay in the conflict audit log (`repairctl conflicts --all`, outcome discarded).")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The dead change's number (seq) from `repairctl pending --failed`.") var seq: Int64

    func run() throws {
        let reply = try options.call(RPC.Discard.self, .init(seq: seq))
        if options.printJSONIfAsked(reply.json) { return }
        let change = reply.result
        Output.line(
            "discarded change \(change.seq) of \(change.collection)/\(change.recordId) (\(change.fields.keys.sorted().joined(separator: ", ")))"
        )
    }
}
