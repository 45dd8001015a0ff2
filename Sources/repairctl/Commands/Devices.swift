import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl devices [--order ID] [--status S]`.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List devices from the local replica.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Option var order: String?
    @Option var status: String?

    func run() throws {
        let reply = try options.call(
            RPC.ListDevices.self,
            .init(
                orderId: order, status: status.map(DeviceStatus.init(rawValue:)), limit: paging.limit,
                offset: paging.offset))
        if options.printJSONIfAsked(reply.json) { return }
        Output.table(
            ["id", "order", "type", "model", "status", "diagnosis"],
            reply.result.map { device in
                [
                    device.id, device.orderId, device.type, "\(Output.cell(device.brand)) \(Output.cell(device.model))",
                    device.status.rawValue, Output.cell(device.diagnosis),
                ]
            })
    }
}
