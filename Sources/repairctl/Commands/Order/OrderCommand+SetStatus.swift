import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension OrderCommand {
    /// `repairctl order set-status <id> <status>`.
    struct SetStatus: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-status", abstract: "Change an order's status.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String
        @Argument(help: "booked_in, in_progress, awaiting_parts, ready, collected, cancelled") var status: String

        func run() throws {
            let reply = try options.call(RPC.UpdateOrder.self, .init(id: id, status: .set(status)))
            if !options.printJSONIfAsked(reply.json) { Output.line("order \(id): status \(status) (queued)") }
        }
    }
}
