import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension DeviceCommand {
    /// `repairctl device new --order ID --type T …`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new", abstract: "Book a device in on an order (works offline).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "The order's id (from the server, or booked in here).") var order: String
        @Option(help: "Kind of device (phone, laptop, …).") var type: String
        @Option var brand: String?
        @Option var model: String?
        @Option var serial: String?
        @Option var imei: String?
        @Option(help: "Unlock code (kept sealed; needs the daemon's passcode key).") var passcode: String?
        @Option var issue: String?
        @Option var price: String?
        @Option var status: String?
        @Option(
            help: ArgumentHelp("The device's id, a lowercase UUID (makes a repeated command safe).", valueName: "uuid"))
        var id: String?

        func run() throws {
            let device = RPC.NewDevice(
                type: type, brand: brand, model: model, serial: serial, imei: imei, passcode: passcode, status: status,
                issue: issue, price: price, id: id)
            let reply = try options.call(RPC.CreateDevice.self, .init(orderId: order, device: device))
            if options.printJSONIfAsked(reply.json) { return }
            Output.line("device \(reply.result.id) booked in on order \(order); queued for the server")
        }
    }
}
