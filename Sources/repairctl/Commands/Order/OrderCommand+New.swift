import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension OrderCommand {
    /// `repairctl order new --client ID | --new-client --email E … [--device "type=phone,brand=Apple,…"]…`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Book an order in (works offline): for a client by id, or a new client; with its devices.",
            discussion: """
                A device is comma-separated key=value pairs: type (required), brand, model, serial, imei, passcode, \
                status, issue, diagnosis, resolution, price, assigned_user, id. Example: \
                --device "type=phone,brand=Apple,model=iPhone 13,issue=Cracked screen,price=89.50". \
                The order shows #pending until the server has created it and given it its number.
                """)
        @OptionGroup var options: GlobalOptions
        @Option(help: "The id of a client in the replica (from the server, or booked in here).") var client: String?
        @Flag(help: "Create the client too, from --email and the other client options.") var newClient = false
        @OptionGroup(title: "The new client (with --new-client)") var clientFields: ClientFields
        @Option(help: ArgumentHelp("A device, as key=value pairs (repeatable).", valueName: "pairs")) var device:
            [String] = []
        @Option(help: "Order status (default booked_in).") var status: String?
        @Option(help: "Order notes.") var notes: String?
        @Option(help: "Deposit taken, e.g. 20 or 19.99.") var deposit: String?
        @Option(help: "Location id.") var location: String?
        @Option(help: "Assigned user id.") var assignedUser: String?
        @Option(
            help: ArgumentHelp("The order's id, a lowercase UUID (makes a repeated command safe).", valueName: "uuid"))
        var id: String?

        func validate() throws {
            guard (client == nil) == newClient else {
                throw ValidationError(
                    "give --client ID, or --new-client with the client's details (--email …), not both")
            }
            guard newClient || clientFields.isEmpty else {
                throw ValidationError("client options (--email …) describe a new client: add --new-client")
            }
            if newClient { _ = try clientFields.params() }
            for text in device { _ = try Self.newDevice(text) }
        }

        func run() throws {
            let connection = try options.connect()
            let clientId: String
            if let client {
                clientId = client
            } else {
                clientId = try options.call(RPC.CreateClient.self, try clientFields.params(), client: connection).result
                    .id
            }
            let params = RPC.CreateOrder.Params(
                clientId: clientId, status: status, notes: notes, deposit: deposit, locationId: location,
                assignedUserId: assignedUser, devices: device.isEmpty ? nil : try device.map(Self.newDevice), id: id)
            let reply = try options.call(RPC.CreateOrder.self, params, client: connection)
            if options.printJSONIfAsked(reply.json) { return }
            let order = reply.result.order
            Output.line(
                "order \(order.displayRef) (\(order.id)) booked in for \(Output.cell(reply.result.client?.email)); queued for the server"
            )
            if !reply.result.devices.isEmpty {
                Output.table(
                    ["device", "type", "model", "issue"],
                    reply.result.devices.map {
                        [$0.id, $0.type, "\(Output.cell($0.brand)) \(Output.cell($0.model))", Output.cell($0.issue)]
                    })
            }
        }

        static let deviceKeys = [
            "type", "brand", "model", "serial", "imei", "passcode", "status", "issue", "diagnosis", "resolution",
            "price",
            "assigned_user", "id",
        ]

        /// `type=phone,brand=Apple` → a device of the order.
        static func newDevice(_ text: String) throws -> RPC.NewDevice {
            var values: [String: String] = [:]
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmed }
                guard parts.count == 2, deviceKeys.contains(parts[0]) else {
                    throw ValidationError(
                        "--device \(text): \(pair) is not key=value with a key of \(deviceKeys.joined(separator: ", "))"
                    )
                }
                values[parts[0]] = parts[1]
            }
            guard let type = values["type"] else { throw ValidationError("--device \(text): type= is required") }
            return RPC.NewDevice(
                type: type, brand: values["brand"], model: values["model"], serial: values["serial"],
                imei: values["imei"], passcode: values["passcode"], status: values["status"], issue: values["issue"],
                diagnosis: values["diagnosis"], resolution: values["resolution"], price: values["price"],
                assignedUserId: values["assigned_user"], id: values["id"])
        }
    }
}

extension String {
    /// Without the spaces around it.
    fileprivate var trimmed: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
