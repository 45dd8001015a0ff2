import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl order set-status|note|show|new`.
struct OrderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order", abstract: "Change, show or book in one order.",
        subcommands: [SetStatus.self, Note.self, Show.self, New.self])

    struct SetStatus: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-status", abstract: "Change an order's status.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String
        @Argument(help: "booked_in, in_progress, awaiting_parts, ready, collected, cancelled") var status: String

        func run() throws {
            let result = try options.call("updateOrder", .object(["id": .string(id), "status": .string(status)]))
            if !options.printJSONIfAsked(result) { print("order \(id): status \(status) (queued)") }
        }
    }

    struct Note: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace an order's notes.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String
        @Argument var text: String

        func run() throws {
            let result = try options.call("updateOrder", .object(["id": .string(id), "notes": .string(text)]))
            if !options.printJSONIfAsked(result) { print("order \(id): notes changed (queued)") }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an order with its client and devices (id or #number).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "An order id, or #number (e.g. #1042).") var reference: String
        @Flag(help: "Also show the devices' passcodes (logged by the daemon).") var showPasscodes = false

        func run() throws {
            let params: JSONValue =
                if reference.hasPrefix("#"), let number = Int(reference.dropFirst()) {
                    .object(["orderNumber": .number(number), "includePasscodes": .bool(showPasscodes)])
                } else {
                    .object(["id": .string(reference), "includePasscodes": .bool(showPasscodes)])
                }
            let result = try options.call("getOrder", params)
            if options.printJSONIfAsked(result) { return }
            let order = result["order"]
            print(Output.bold("Order \(Output.orderRef(order?["order_number"])) (\(Output.cell(order?["id"])))"))
            print("status:   \(Output.cell(order?["status"]))")
            print("client:   \(Output.cell(order?["client_name"])) <\(Output.cell(result["client"]?["email"]))> \(Output.cell(result["client"]?["phone"]))")
            print("total:    \(Output.cell(order?["total"]))   deposit: \(Output.cell(order?["deposit"]))   balance: \(Output.cell(order?["balance"]))")
            print("notes:    \(Output.cell(order?["notes"]))")
            print("updated:  \(Output.relative(order?["updated_at"]))")
            print("")
            guard case .array(let devices)? = result["devices"] else { return }
            Output.table(
                ["device", "type", "model", "status", "diagnosis"] + (showPasscodes ? ["passcode"] : []),
                devices.map {
                    [Output.cell($0["id"]), Output.cell($0["type"]), "\(Output.cell($0["brand"])) \(Output.cell($0["model"]))",
                        Output.cell($0["status"]), Output.cell($0["diagnosis"])]
                        + (showPasscodes ? [Output.cell($0["passcode"])] : [])
                })
        }
    }
}

/// `repairctl device update <id> [--status] [--diagnosis] [--resolution]`.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Change one device, or book one in.", subcommands: [Update.self, New.self])

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a device's status, diagnosis or resolution.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String
        @Option var status: String?
        @Option var diagnosis: String?
        @Option var resolution: String?

        func validate() throws {
            guard status != nil || diagnosis != nil || resolution != nil else {
                throw ValidationError("give at least one of --status, --diagnosis, --resolution")
            }
        }

        func run() throws {
            var params: [(key: String, value: JSONValue)] = [("id", .string(id))]
            if let status { params.append(("status", .string(status))) }
            if let diagnosis { params.append(("diagnosis", .string(diagnosis))) }
            if let resolution { params.append(("resolution", .string(resolution))) }
            let result = try options.call("updateDevice", .object(params))
            if !options.printJSONIfAsked(result) { print("device \(id) changed (queued)") }
        }
    }
}

/// `repairctl ticket reply|show`.
struct TicketCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ticket", abstract: "Reply to or show one ticket.", subcommands: [Reply.self, Show.self])

    struct Reply: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a message to a ticket.")
        @OptionGroup var options: GlobalOptions
        @Argument var ticketId: String
        @Argument var text: String
        @Flag(help: "A note for staff only.") var `internal` = false

        func run() throws {
            let result = try options.call(
                "replyToTicket",
                .object(["ticketId": .string(ticketId), "content": .string(text), "internal": .bool(`internal`)]))
            if !options.printJSONIfAsked(result) { print("message \(Output.cell(result["id"])) queued for \(ticketId)") }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a ticket and its messages.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String

        func run() throws {
            let result = try options.call("getTicket", .object(["id": .string(id)]))
            if options.printJSONIfAsked(result) { return }
            let ticket = result["ticket"]
            print(Output.bold("Ticket #\(Output.cell(ticket?["ticket_number"])): \(Output.cell(ticket?["subject"]))"))
            print("status: \(Output.cell(ticket?["status"]))   client: \(Output.cell(ticket?["client_name"])) <\(Output.cell(ticket?["client_email"]))>")
            guard case .array(let messages)? = result["messages"] else { return }
            for message in messages {
                let who = Output.cell(message["sender_name"]).isEmpty ? Output.cell(message["sender_type"]) : Output.cell(message["sender_name"])
                let note = message["is_internal"]?.boolValue == true ? " (internal)" : ""
                print("\n\(Output.bold(who))\(note) · \(Output.cell(message["created_at"]))")
                print(message["content"]?.stringValue ?? "")
            }
        }
    }
}

/// Paging options of the list commands.
struct Paging: ParsableArguments {
    @Option(help: "At most this many rows (1…1000).") var limit = 50
    @Option(help: "Skip this many rows.") var offset = 0

    var params: [(key: String, value: JSONValue)] { [("limit", .number(limit)), ("offset", .number(offset))] }
}

/// `repairctl orders [--status S]`.
struct Orders: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List orders from the local replica, newest first.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Option var status: String?
    @Option var client: String?

    func run() throws {
        var params = paging.params
        if let status { params.append(("status", .string(status))) }
        if let client { params.append(("clientId", .string(client))) }
        let result = try options.call("listOrders", .object(params))
        if options.printJSONIfAsked(result) { return }
        guard case .array(let orders) = result else { return }
        Output.table(
            ["#", "id", "status", "client", "total", "balance", "updated"],
            orders.map {
                [Output.orderRef($0["order_number"]), Output.cell($0["id"]), Output.cell($0["status"]), Output.cell($0["client_name"]),
                    Output.cell($0["total"]), Output.cell($0["balance"]), Output.relative($0["updated_at"])]
            })
    }
}

/// `repairctl devices [--order ID] [--status S]`.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List devices from the local replica.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Option var order: String?
    @Option var status: String?

    func run() throws {
        var params = paging.params
        if let order { params.append(("orderId", .string(order))) }
        if let status { params.append(("status", .string(status))) }
        let result = try options.call("listDevices", .object(params))
        if options.printJSONIfAsked(result) { return }
        guard case .array(let devices) = result else { return }
        Output.table(
            ["id", "order", "type", "model", "status", "diagnosis"],
            devices.map {
                [Output.cell($0["id"]), Output.cell($0["order_id"]), Output.cell($0["type"]),
                    "\(Output.cell($0["brand"])) \(Output.cell($0["model"]))", Output.cell($0["status"]), Output.cell($0["diagnosis"])]
            })
    }
}

/// `repairctl clients [search]`.
struct Clients: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List or search clients in the local replica.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Argument(help: "Part of a name, email, phone or company.") var search: String?

    func run() throws {
        var params = paging.params
        if let search { params.append(("search", .string(search))) }
        let result = try options.call("listClients", .object(params))
        if options.printJSONIfAsked(result) { return }
        guard case .array(let clients) = result else { return }
        Output.table(
            ["id", "name", "email", "phone", "company", "orders"],
            clients.map {
                [Output.cell($0["id"]), "\(Output.cell($0["first_name"])) \(Output.cell($0["last_name"]))", Output.cell($0["email"]),
                    Output.cell($0["phone"]), Output.cell($0["company"]), Output.cell($0["order_count"])]
            })
    }
}

/// `repairctl tickets [--status S]`.
struct Tickets: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List tickets from the local replica.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var paging: Paging
    @Option var status: String?

    func run() throws {
        var params = paging.params
        if let status { params.append(("status", .string(status))) }
        let result = try options.call("listTickets", .object(params))
        if options.printJSONIfAsked(result) { return }
        guard case .array(let tickets) = result else { return }
        Output.table(
            ["#", "id", "status", "subject", "client", "messages", "updated"],
            tickets.map {
                [Output.cell($0["ticket_number"]), Output.cell($0["id"]), Output.cell($0["status"]), Output.cell($0["subject"]),
                    Output.cell($0["client_name"]), Output.cell($0["message_count"]), Output.relative($0["updated_at"])]
            })
    }
}

/// `repairctl dashboard [--period P]`.
struct Dashboard: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the cached dashboard figures.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "today, week or month.") var period = "today"

    func run() throws {
        let result = try options.call("dashboardStats", .object(["period": .string(period)]))
        if options.printJSONIfAsked(result) { return }
        let stats = result["stats"]
        print(Output.bold("Dashboard · \(period)") + " (as of \(Output.relative(result["fetchedAt"])))")
        for metric in ["devices", "revenue", "clients", "new_clients", "returning_clients"] {
            print("\(metric.replacingOccurrences(of: "_", with: " ").padding(toLength: 18, withPad: " ", startingAt: 0)) \(Output.cell(stats?[metric]?["current"]))")
        }
    }
}
