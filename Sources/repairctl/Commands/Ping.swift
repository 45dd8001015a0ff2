import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl ping`.
struct Ping: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ping", abstract: "Check that the daemon answers.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let reply = try options.call(RPC.Ping.self)
        if !options.printJSONIfAsked(reply.json) { Output.line(TerminalText(reply.result)) }
    }
}
