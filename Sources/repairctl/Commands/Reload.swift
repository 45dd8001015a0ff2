import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl reload`.
struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload", abstract: "Reload the daemon's configuration (like SIGHUP).")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let reply = try options.call(RPC.Reload.self)
        if options.printJSONIfAsked(reply.json) { return }
        let unknown = reply.result.unknownKeys
        Output.line(
            "configuration reloaded"
                + (unknown.isEmpty ? "" : " (unknown keys ignored: \(unknown.joined(separator: ", ")))"))
    }
}
