import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl orders [--status S] [--client ID]`.
struct Orders: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orders", abstract: "List orders from the local replica, newest first.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Option var status: String?
    @Option var client: String?

    func run() throws {
        let reply = try options.call(
            RPC.ListOrders.self,
            .init(
                status: status.map(OrderStatus.init(rawValue:)), clientId: client, limit: paging.limit,
                offset: paging.offset))
        if options.printJSONIfAsked(reply.json) { return }
        Output.table(
            ["#", "id", "status", "client", "total", "balance", "updated"],
            reply.result.map { order in
                [
                    order.orderNumber.map(String.init) ?? "pending", order.id, order.status.rawValue,
                    Output.cell(order.clientName),
                    Output.money(order.total), Output.money(order.balance), Output.relative(order.updatedAt),
                ]
            })
    }
}
