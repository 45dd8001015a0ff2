import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension TicketCommand {
    /// `repairctl ticket show <id>`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a ticket and its messages.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String

        func run() throws {
            let reply = try options.call(RPC.GetTicket.self, .init(id: id))
            if options.printJSONIfAsked(reply.json) { return }
            let ticket = reply.result.ticket
            Output.line(Output.bold("Ticket #\(ticket.ticketNumber): \(Output.cell(ticket.subject))"))
            Output.line(
                "status: \(ticket.status.rawValue)   client: \(Output.cell(ticket.clientName)) <\(Output.cell(ticket.clientEmail))>"
            )
            for message in reply.result.messages {
                let who = message.senderName.map(Output.cell) ?? message.senderType.rawValue
                let note = message.isInternal ? " (internal)" : ""
                Output.line("")
                Output.line("\(Output.bold(TerminalText(who)))\(note) · \(message.createdAt.rfc3339)")
                Output.line(TerminalText(message.content))
            }
        }
    }
}
