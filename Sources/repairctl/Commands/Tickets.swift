import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl tickets [--status S]`.
struct Tickets: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tickets", abstract: "List tickets from the local replica.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Option var status: String?

    func run() throws {
        let reply = try options.call(
            RPC.ListTickets.self,
            .init(status: status.map(TicketStatus.init(rawValue:)), limit: paging.limit, offset: paging.offset))
        if options.printJSONIfAsked(reply.json) { return }
        Output.table(
            ["#", "id", "status", "subject", "client", "messages", "updated"],
            reply.result.map { ticket in
                [
                    String(ticket.ticketNumber), ticket.id, ticket.status.rawValue, ticket.subject,
                    Output.cell(ticket.clientName),
                    ticket.messageCount.map(String.init) ?? "", Output.relative(ticket.updatedAt),
                ]
            })
    }
}
