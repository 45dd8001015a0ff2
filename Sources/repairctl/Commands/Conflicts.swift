import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl conflicts [--all]`.
struct Conflicts: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "List conflicts waiting for a decision (--all: the audit log).")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "The whole audit log, resolved ones included.") var all = false

    func run() throws {
        let reply = try options.call(RPC.Conflicts.self, .init(open: !all))
        if options.printJSONIfAsked(reply.json) { return }
        Output.table(
            ["id", "record", "fields", "local", "remote", "policy", "outcome"],
            reply.result.map { conflict in
                [
                    String(conflict.id), "\(conflict.collection)/\(conflict.recordId)",
                    conflict.fields.joined(separator: ","),
                    conflict.fields.map { Output.field(conflict.local[$0]) }.joined(separator: " | "),
                    conflict.fields.map { Output.field(conflict.remote[$0]) }.joined(separator: " | "),
                    conflict.policy, conflict.outcome.rawValue,
                ]
            }, width: 32)
    }
}
