import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension TicketCommand {
    /// `repairctl ticket reply <ticket> <text> [--internal] [--id UUID]`.
    struct Reply: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reply",
            abstract: "Add a message to a ticket.",
            discussion: """
                With --id (a lowercase UUID you choose), running the same command again is safe: the message is written once. \
                The same id with other text is refused.
                """)
        @OptionGroup var options: GlobalOptions
        @Argument var ticketId: String
        @Argument var text: String
        @Flag(help: "A note for staff only.") var `internal` = false
        @Option(
            help: ArgumentHelp("The message's id, a lowercase UUID (makes a repeated reply safe).", valueName: "uuid"))
        var id: String?

        func run() throws {
            let reply = try options.call(
                RPC.ReplyToTicket.self, .init(ticketId: ticketId, content: text, internal: `internal`, id: id))
            if !options.printJSONIfAsked(reply.json) {
                Output.line("message \(reply.result.id) queued for \(ticketId)")
            }
        }
    }
}
