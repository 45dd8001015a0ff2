import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol


/// `repairctl queue order-updated <id>`: tell the daemon another program changed a record.
struct Queue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Queue a change another program made in the store (order-updated, device-updated, ticket-message-created, client-created, order-created, device-created).")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "What changed.") var kind: ChangeKind
    @Argument(help: "The record's id.") var id: String

    func run() throws {
        let reply = try options.call(RPC.QueueChange.self, .init(kind: kind, id: id))
        if options.printJSONIfAsked(reply.json) { return }
        let result = reply.result
        if result.queued {
            let already = result.reason.map { " — \($0)" } ?? ""
            Output.line(
                "queued \(kind.rawValue) \(id) (\((result.fields ?? []).joined(separator: ", ")))\(already); \(result.pending) pending")
        } else {
            Output.line("nothing to queue: \(result.reason ?? "")")
        }
    }
}
