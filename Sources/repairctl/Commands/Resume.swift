import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl resume`.
struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume automatic sync.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let reply = try options.call(RPC.Resume.self)
        if !options.printJSONIfAsked(reply.json) { Output.line("automatic sync resumed") }
    }
}
