import ArgumentParser
import Foundation
import RepairSyncControl

// MARK: - Booking in (issue 23): `repairctl client new`, `repairctl order new`, `repairctl device new`
//
// Over the socket's createClient, createOrder and createDevice (docs/rpc.md). Kept in one file, apart from the other
// commands, so that it can move onto a typed catalogue of methods as it is.

/// `repairctl client new --email E [--first-name] [--last-name] …`.
struct ClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "Create a client (works offline).", subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a client here; it reaches the server with the next push.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var client: ClientFields
        @Option(help: "The client's id (a UUID); the daemon makes one when absent. Repeat a call with the same id safely.")
        var id: String?

        func run() throws {
            var params = client.params()
            if let id { params.append(("id", .string(id))) }
            let result = try options.call("createClient", .object(params))
            if options.printJSONIfAsked(result) { return }
            print("client \(Output.cell(result["id"])) created (\(Output.cell(result["email"]))); queued for the server")
        }
    }
}

/// A client's fields as options (`--new-client-…` when they describe the client of a new order).
struct ClientFields: ParsableArguments {
    @Option(help: "Email address.") var email: String?
    @Option var firstName: String?
    @Option var lastName: String?
    @Option var phone: String?
    @Option var company: String?
    @Option var address: String?
    @Option var city: String?
    @Option var postcode: String?
    @Option(name: .customLong("client-notes"), help: "Notes about the client.") var notes: String?

    var isEmpty: Bool {
        [email, firstName, lastName, phone, company, address, city, postcode, notes].allSatisfy { $0 == nil }
    }

    func params() -> [(key: String, value: JSONValue)] {
        let named: [(String, String?)] = [
            ("email", email), ("firstName", firstName), ("lastName", lastName), ("phone", phone), ("company", company),
            ("address", address), ("city", city), ("postcode", postcode), ("notes", notes),
        ]
        return named.compactMap { name, value in value.map { (key: name, value: .string($0)) } }
    }
}

extension OrderCommand {
    /// `repairctl order new --client ID | --new-client --email E … [--device "type=phone,brand=Apple,issue=…"]…`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Book an order in (works offline): for a client by id, or a new client; with its devices.",
            discussion: """
                A device is given as comma-separated key=value pairs: type (required), brand, model, serial, imei, \
                passcode, status, issue, diagnosis, resolution, price, id. Example: \
                --device "type=phone,brand=Apple,model=iPhone 13,issue=Cracked screen,price=89.50"
                """)
        @OptionGroup var options: GlobalOptions
        @Option(help: "The id of an existing client (in the replica, or created here).") var client: String?
        @Flag(help: "Create the client too, from --email and the other client options.") var newClient = false
        @OptionGroup(title: "The new client (with --new-client)") var clientFields: ClientFields
        @Option(help: "A device, as key=value pairs (repeatable).") var device: [String] = []
        @Option(help: "Order status (default booked_in).") var status: String?
        @Option(help: "Order notes.") var notes: String?
        @Option(help: "Deposit taken, e.g. 20 or 19.99.") var deposit: String?
        @Option(help: "Location id.") var location: String?
        @Option(help: "Assigned user id.") var assignedUser: String?
        @Option(help: "The order's id (a UUID); the daemon makes one when absent.") var id: String?

        func validate() throws {
            guard (client == nil) == newClient else {
                throw ValidationError("give --client ID, or --new-client with the client's details (--email …), not both")
            }
            guard newClient || clientFields.isEmpty else {
                throw ValidationError("client options (--email …) describe a new client: add --new-client")
            }
            for text in device { _ = try Self.deviceParams(text) }
        }

        func run() throws {
            let connection = try options.connect()
            var clientId = client
            if clientId == nil {
                let created = try options.call("createClient", .object(clientFields.params()), client: connection)
                clientId = created["id"]?.stringValue
            }
            var params: [(key: String, value: JSONValue)] = [("clientId", .string(clientId ?? ""))]
            let optional: [(String, String?)] = [
                ("status", status), ("notes", notes), ("deposit", deposit), ("locationId", location),
                ("assignedUserId", assignedUser), ("id", id),
            ]
            params += optional.compactMap { name, value in value.map { (key: name, value: .string($0)) } }
            if !device.isEmpty { params.append(("devices", .array(try device.map { .object(try Self.deviceParams($0)) }))) }
            let result = try options.call("createOrder", .object(params), client: connection)
            if options.printJSONIfAsked(result) { return }
            let order = result["order"]
            print(
                "order \(Output.orderRef(order?["order_number"])) (\(Output.cell(order?["id"]))) booked in for \(Output.cell(result["client"]?["email"])); queued for the server"
            )
            if case .array(let devices)? = result["devices"], !devices.isEmpty {
                Output.table(
                    ["device", "type", "model", "issue"],
                    devices.map {
                        [Output.cell($0["id"]), Output.cell($0["type"]), "\(Output.cell($0["brand"])) \(Output.cell($0["model"]))",
                            Output.cell($0["issue"])]
                    })
            }
        }

        static let deviceKeys: [String: String] = [
            "type": "type", "brand": "brand", "model": "model", "serial": "serial", "imei": "imei", "passcode": "passcode",
            "status": "status", "issue": "issue", "diagnosis": "diagnosis", "resolution": "resolution", "price": "price",
            "id": "id", "assigned_user": "assignedUserId",
        ]

        /// `type=phone,brand=Apple` → the device's params.
        static func deviceParams(_ text: String) throws -> [(key: String, value: JSONValue)] {
            var params: [(key: String, value: JSONValue)] = []
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let name = deviceKeys[parts[0]] else {
                    throw ValidationError(
                        "--device \(text): \(pair) is not key=value with a key of \(deviceKeys.keys.sorted().joined(separator: ", "))")
                }
                params.append((name, .string(parts[1])))
            }
            guard params.contains(where: { $0.key == "type" }) else { throw ValidationError("--device \(text): type= is required") }
            return params
        }
    }
}

extension DeviceCommand {
    /// `repairctl device new --order ID --type T …`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Book a device in on an order (works offline).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "The order's id.") var order: String
        @Option(help: "Kind of device (phone, laptop, …).") var type: String
        @Option var brand: String?
        @Option var model: String?
        @Option var serial: String?
        @Option var imei: String?
        @Option(help: "Unlock code (kept sealed; needs the daemon's passcode key).") var passcode: String?
        @Option var issue: String?
        @Option var price: String?
        @Option var status: String?
        @Option(help: "The device's id (a UUID); the daemon makes one when absent.") var id: String?

        func run() throws {
            let named: [(String, String?)] = [
                ("orderId", order), ("type", type), ("brand", brand), ("model", model), ("serial", serial), ("imei", imei),
                ("passcode", passcode), ("issue", issue), ("price", price), ("status", status), ("id", id),
            ]
            let params = named.compactMap { name, value in value.map { (key: name, value: JSONValue.string($0)) } }
            let result = try options.call("createDevice", .object(params))
            if options.printJSONIfAsked(result) { return }
            print("device \(Output.cell(result["id"])) booked in on order \(order); queued for the server")
        }
    }
}

extension Output {
    /// `#1042`, or `#pending` for an order the server has not numbered yet.
    static func orderRef(_ number: JSONValue?) -> String {
        if case .number(let text)? = number { return "#" + text }
        return "#pending"
    }
}
