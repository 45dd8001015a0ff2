import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl queue order-updated <id>`: tell the daemon another program changed a record.
struct Queue: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue a change another program made in the store (order-updated, device-updated, ticket-message-created, client-created, order-created, device-created).")

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case orderUpdated = "order-updated"
        case deviceUpdated = "device-updated"
        case ticketMessageCreated = "ticket-message-created"
        case clientCreated = "client-created"
        case orderCreated = "order-created"
        case deviceCreated = "device-created"
    }

    @OptionGroup var options: GlobalOptions
    @Argument(help: "What changed.") var kind: Kind
    @Argument(help: "The record's id.") var id: String

    func run() throws {
        let result = try options.call("queueChange", .object(["kind": .string(kind.rawValue), "id": .string(id)]))
        if options.printJSONIfAsked(result) { return }
        if result["queued"]?.boolValue == true {
            let fields: [String] =
                if case .array(let values)? = result["fields"] { values.compactMap(\.stringValue) } else { [] }
            print("queued \(kind.rawValue) \(id) (\(fields.joined(separator: ", "))); \(Output.cell(result["pending"])) pending")
        } else {
            print("nothing to queue: \(Output.cell(result["reason"]))")
        }
    }
}
