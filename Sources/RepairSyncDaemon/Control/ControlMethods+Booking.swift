internal import Foundation
internal import RepairSyncControl
internal import RepairSyncEngine
internal import RepairSyncModels

// MARK: - Booking in (issue 23): createClient, createOrder, createDevice
//
// Kept apart from the string switch of ControlMethods.swift so that it can move onto a typed catalogue of methods as
// it is: three methods, their params (camelCase names of the record's fields, and an optional `id`), and their
// results (the records in the API's shapes, passcodes null). `call` reaches these through its `default:` case.

extension ControlMethods {
    /// The booking methods (all change something: peer-authorised and audit-logged like the other changes).
    static let bookingMethods: [String] = ["createClient", "createOrder", "createDevice"]

    /// Params (camelCase) → API field names, per record.
    static let clientParams: KeyValuePairs<String, String> = [
        "email": "email", "firstName": "first_name", "lastName": "last_name", "phone": "phone", "company": "company",
        "address": "address", "city": "city", "postcode": "postcode", "notes": "notes",
    ]
    static let orderParams: KeyValuePairs<String, String> = [
        "clientId": "client_id", "status": "status", "notes": "notes", "deposit": "deposit",
        "locationId": "location_id", "assignedUserId": "assigned_user_id",
    ]
    static let deviceParams: KeyValuePairs<String, String> = [
        "orderId": "order_id", "type": "type", "brand": "brand", "model": "model", "serial": "serial", "imei": "imei",
        "passcode": "passcode", "status": "status", "issue": "issue", "diagnosis": "diagnosis",
        "resolution": "resolution", "price": "price", "assignedUserId": "assigned_user_id",
    ]

    /// One of the booking methods, or nil when `method` is not one of them.
    func callBooking(_ method: String, _ params: JSONValue?) async throws -> JSONValue? {
        switch method {
        case "createClient":
            let client = try await engine.createClient(try Self.newRecord(params, Self.clientParams))
            await scheduler.localChange()
            return try JSONValue.encoding(client)
        case "createOrder":
            let named = try JSONRPCParams(params, allowed: Set(Self.orderParams.map(\.key) + ["id", "devices"]))
            var devices: [LocalChanges.NewRecord] = []
            switch named.value("devices") {
            case nil, .null?: break
            case .array(let values)?:
                for (index, value) in values.enumerated() {
                    guard case .object = value else {
                        throw JSONRPCError.invalidParams("devices", "item \(index) must be an object of device fields")
                    }
                    var device = try Self.newRecord(value, Self.deviceParams, context: "devices[\(index)].")
                    if device.fields["order_id"] != nil {
                        throw JSONRPCError.invalidParams("devices[\(index)].orderId", "a device of a new order takes the order's id")
                    }
                    device.fields["order_id"] = nil
                    devices.append(device)
                }
            case let other?:
                throw JSONRPCError.invalidParams("devices", "must be an array of device objects, not \(other.typeName)")
            }
            let order = try Self.newRecord(params, Self.orderParams, extra: ["devices"])
            let (created, booked) = try await engine.createOrder(order, devices: devices)
            await scheduler.localChange()
            let client = try queries.client(id: created.clientId)
            return .object([
                ("order", try JSONValue.encoding(created)), ("client", try client.map { try JSONValue.encoding($0) } ?? .null),
                ("devices", try JSONValue.encoding(booked.map { passcodes($0, reveal: false) })),
            ])
        case "createDevice":
            let device = try await engine.createDevice(try Self.newRecord(params, Self.deviceParams))
            await scheduler.localChange()
            return try JSONValue.encoding(passcodes(device, reveal: false))
        default:
            return nil
        }
    }

    /// The record's fields by API name from camelCase params (strings or null; money also as a JSON number), and
    /// the optional `id`. Unknown names are -32602, naming the param.
    static func newRecord(
        _ params: JSONValue?, _ names: KeyValuePairs<String, String>, extra: Set<String> = [], context: String = ""
    ) throws -> LocalChanges.NewRecord {
        let allowed = Set(names.map(\.key) + ["id"]).union(extra)
        // A device of createOrder is named with its place in `devices`.
        if !context.isEmpty, case .object(let members)? = params,
            let unknown = members.first(where: { !allowed.contains($0.key) })
        {
            throw JSONRPCError.invalidParams(
                context + unknown.key, "is not a field of a device (known: \(allowed.sorted().joined(separator: ", ")))")
        }
        let named = try JSONRPCParams(params, allowed: allowed)
        var fields: FieldValues = [:]
        for (param, field) in names {
            switch named.value(param) {
            case nil: continue
            case .null?: fields[field] = .some(nil)
            case .string(let text)?: fields[field] = text
            case .number(let text)? where field == "deposit" || field == "price": fields[field] = text
            case let other?:
                throw JSONRPCError.invalidParams(context + param, "must be a string, not \(other.typeName)")
            }
        }
        let id: String?
        switch named.value("id") {
        case nil, .null?: id = nil
        case .string(let text)?: id = text
        case let other?: throw JSONRPCError.invalidParams(context + "id", "must be a string (a UUID), not \(other.typeName)")
        }
        return LocalChanges.NewRecord(id: id, fields: fields)
    }
}
