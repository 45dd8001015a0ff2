import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl clients [search]`.
struct Clients: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients", abstract: "List or search clients in the local replica.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Argument(help: "Part of a name, email, phone or company.") var search: String?

    func run() throws {
        let reply = try options.call(
            RPC.ListClients.self, .init(search: search, limit: paging.limit, offset: paging.offset))
        if options.printJSONIfAsked(reply.json) { return }
        Output.table(
            ["id", "name", "email", "phone", "company", "orders"],
            reply.result.map { client in
                [
                    client.id, "\(Output.cell(client.firstName)) \(Output.cell(client.lastName))", client.email,
                    Output.cell(client.phone), Output.cell(client.company), String(client.orderCount),
                ]
            })
    }
}
