import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl pause`.
struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause", abstract: "Pause automatic sync (manual syncs still run).")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let reply = try options.call(RPC.Pause.self)
        if !options.printJSONIfAsked(reply.json) { Output.line("automatic sync paused") }
    }
}
