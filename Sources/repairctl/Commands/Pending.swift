import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl pending [--failed]`.
struct Pending: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pending", abstract: "List local changes not yet on the server.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Only changes that failed and wait for a retry, or are dead.") var failed = false

    func run() throws {
        let reply = try options.call(RPC.Pending.self, .init())
        let rows = zip(reply.result, reply.json.arrayElements).filter {
            !failed || [.failed, .dead].contains($0.0.state)
        }
        if options.printJSONIfAsked(.array(rows.map(\.1))) { return }
        Output.table(
            ["seq", "state", "class", "record", "fields", "attempts", "last error"],
            rows.map(\.0).map { change in
                [
                    String(change.seq), change.state.rawValue, Output.cell(change.priority?.rawValue),
                    "\(change.collection)/\(change.recordId)",
                    change.fields.keys.sorted().joined(separator: ","), String(change.attempts),
                    Output.cell(change.lastError),
                ]
            })
    }
}
