import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension OrderCommand {
    /// `repairctl order show <id|#number>`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show an order with its client and devices (id or #number).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "An order id, or #number (e.g. #1042).") var reference: String
        @Flag(help: "Also show the devices' passcodes (logged by the daemon).") var showPasscodes = false

        func run() throws {
            let params: RPC.GetOrder.Params =
                if reference.hasPrefix("#"), let number = Int(reference.dropFirst()) {
                    .init(orderNumber: number, includePasscodes: showPasscodes)
                } else {
                    .init(id: reference, includePasscodes: showPasscodes)
                }
            let reply = try options.call(RPC.GetOrder.self, params)
            if options.printJSONIfAsked(reply.json) { return }
            let (order, client) = (reply.result.order, reply.result.client)
            Output.line(Output.bold("Order #\(order.orderNumber) (\(order.id))"))
            Output.line("status:   \(order.status.rawValue)")
            Output.line("client:   \(Output.cell(order.clientName)) <\(Output.cell(client?.email))> \(Output.cell(client?.phone))")
            let money = { (amount: Money?) in amount?.displayText ?? "-" }
            Output.line("total:    \(money(order.total))   deposit: \(money(order.deposit))   balance: \(money(order.balance))")
            Output.line("notes:    \(order.notes.map(Output.cell) ?? "-")")
            Output.line("updated:  \(Output.relative(order.updatedAt))")
            Output.line("")
            Output.table(
                ["device", "type", "model", "status", "diagnosis"] + (showPasscodes ? ["passcode"] : []),
                reply.result.devices.map { device in
                    [
                        device.id, device.type, "\(Output.cell(device.brand)) \(Output.cell(device.model))",
                        device.status.rawValue, Output.cell(device.diagnosis),
                    ] + (showPasscodes ? [Output.cell(device.passcode)] : [])
                })
        }
    }
}
