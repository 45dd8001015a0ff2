import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension OrderCommand {
    /// `repairctl order note <id> <text>`.
    struct Note: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "note", abstract: "Replace an order's notes.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String
        @Argument var text: String

        func run() throws {
            let reply = try options.call(RPC.UpdateOrder.self, .init(id: id, notes: .set(text)))
            if !options.printJSONIfAsked(reply.json) { Output.line("order \(id): notes changed (queued)") }
        }
    }
}
