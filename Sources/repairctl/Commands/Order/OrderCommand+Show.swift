import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension OrderCommand {
    /// `repairctl order show <id|#number>`: an order booked in here is found by its id at once, and by its number
    /// once the server has given it one.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show an order with its client and devices (id or #number).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "An order id, or its number (#1042 or 1042).") var reference: String
        @Flag(help: "Also show the devices' passcodes (logged by the daemon).") var showPasscodes = false

        func run() throws {
            let reply = try find()
            if options.printJSONIfAsked(reply.json) { return }
            let (order, client) = (reply.result.order, reply.result.client)
            Output.line(Output.bold("Order \(order.displayRef) (\(order.id))"))
            Output.line("status:   \(order.status.rawValue)")
            Output.line(
                "client:   \(Output.cell(order.clientName)) <\(Output.cell(client?.email))> \(Output.cell(client?.phone))"
            )
            let money = { (amount: Money?) in amount?.displayText ?? "-" }
            Output.line(
                "total:    \(money(order.total))   deposit: \(money(order.deposit))   balance: \(money(order.balance))")
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

        /// `#1042` is a number; `1042` is an id if the replica has one so named, else a number.
        private func find() throws -> ControlClient.Reply<RPC.GetOrder.Result> {
            if reference.hasPrefix("#"), let number = Int(reference.dropFirst()) {
                return try options.call(RPC.GetOrder.self, .init(orderNumber: number, includePasscodes: showPasscodes))
            }
            guard let number = Int(reference), number >= 0 else {
                return try options.call(RPC.GetOrder.self, .init(id: reference, includePasscodes: showPasscodes))
            }
            let client = try options.connect()
            do {
                return try client.exchange(RPC.GetOrder.self, .init(id: reference, includePasscodes: showPasscodes))
            } catch .rpc(let error) where error.code == ErrorCode.notFound.rawValue {
                return try options.call(
                    RPC.GetOrder.self, .init(orderNumber: number, includePasscodes: showPasscodes), client: client)
            } catch {
                throw GlobalOptions.exit(error)
            }
        }
    }
}
