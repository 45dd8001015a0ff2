internal import Foundation
internal import GRDB
internal import RepairSyncModels

/// `POST /api/v1/clients`, `/orders`, `/devices` (docs/api.md section 4.7): records with a client-generated id.
///
/// The id makes a create safe to repeat even without its key: the same id with the same body answers the record
/// (200), with another body `409 duplicate_id`. What is the server's — an order's number, the denormalised names,
/// counts and totals — is set here, and the parent the create writes (a client's `order_count`, an order's
/// `device_count` and totals) moves to the end of its feed like any other write.
extension BackendStore {
    /// Keys of a record that a create may not set: the server's.
    private static let serverKeys: Set<String> = [
        "version", "created_at", "updated_at", "order_number", "client_name", "client_email", "client_phone",
        "location_name", "assigned_user_name", "device_count", "total", "balance", "order_count", "total_spent",
    ]

    func createNew(
        _ collection: SyncCollection, body: Data, idempotencyKey: String?, token: String, fingerprint: String
    ) async throws -> BackendReply {
        guard let shape = NewRecordShape.of(collection) else {
            return .error(405, "invalid_request", "\(collection.name) cannot be created through the API")
        }
        guard let object = JSONValue.object(from: body) else {
            return .error(400, "invalid_request", "the body must be a JSON object")
        }
        let values: [String: String]
        switch Self.validate(object, shape) {
        case .success(let valid): values = valid
        case .failure(let refusal): return refusal.reply
        }
        guard case .string(let id)? = object["id"], NewRecordShape.isClientId(id) else {
            return .error(422, "invalid_value", "id must be a client-generated UUID", field: "id")
        }
        let creation = requestFingerprint(method: "POST", path: "/api/v1/\(collection.name)", body: body)
        let reply = try await pool.write { db in
            try idempotent(db, token: token, key: idempotencyKey, fingerprint: fingerprint) {
                try createRecord(shape, id: id, values, creation: creation, db)
            }
        }
        if reply.status == 201 && !reply.replayed {
            counters.update { $0.recordsCreated[collection.name, default: 0] += 1 }
        }
        if reply.status == 200 && !reply.replayed { counters.update { $0.createReplays += 1 } }
        return reply
    }

    /// The body's values (money canonical), or the refusal naming the field.
    private static func validate(_ object: [String: JSONValue], _ shape: NewRecordShape) -> Result<
        [String: String], ReplyError
    > {
        var values: [String: String] = [:]
        for (name, value) in object.sorted(by: { $0.key < $1.key }) where name != "id" {
            guard shape.fields.contains(name) else {
                let reason =
                    serverKeys.contains(name)
                    ? "\(name) is set by the server"
                    : "\(name) is not a field of a new record; fields: id, \(shape.fields.joined(separator: ", "))"
                return .failure(ReplyError(.error(422, "invalid_field", reason, field: name)))
            }
            let text: String
            switch value {
            case .null: continue
            case .string(let string): text = string
            case .number(let number) where shape.money.contains(name): text = Money(number).canonicalText
            default:
                return .failure(
                    ReplyError(
                        .error(
                            422, "invalid_value", "\(name) must be a string or null, not \(value.typeName)", field: name
                        )))
            }
            guard text.unicodeScalars.count <= 10_000 else {
                return .failure(
                    ReplyError(.error(422, "invalid_value", "\(name) is longer than 10000 characters", field: name)))
            }
            if shape.money.contains(name) {
                guard let money = Money(exactly: text), money >= .zero else {
                    return .failure(
                        ReplyError(
                            .error(422, "invalid_value", "\(name) must be an amount that is not negative", field: name))
                    )
                }
                values[name] = money.canonicalText
            } else {
                values[name] = text
            }
        }
        for name in shape.required where values[name].map({ $0.allSatisfy(\.isWhitespace) }) ?? true {
            return .failure(ReplyError(.error(422, "invalid_value", "\(name) is required", field: name)))
        }
        if let email = values["email"], !email.contains("@") {
            return .failure(ReplyError(.error(422, "invalid_value", "email must be an email address", field: "email")))
        }
        if let status = values["status"] {
            let known =
                shape.collection == .orders ? OrderStatus.parse(status).isKnown : DeviceStatus.parse(status).isKnown
            guard known else {
                return .failure(
                    ReplyError(
                        .error(
                            422, "invalid_value", "\"\(status)\" is not a status this server accepts", field: "status"))
                )
            }
        }
        return .success(values)
    }

    private func createRecord(
        _ shape: NewRecordShape, id: String, _ values: [String: String], creation: String, _ db: Database
    ) throws -> BackendReply {
        let collection = shape.collection
        if let stored = try Data.fetchOne(
            db, sql: "SELECT body FROM records WHERE collection = ? AND id = ?", arguments: [collection.name, id])
        {
            let same =
                try String.fetchOne(
                    db, sql: "SELECT fingerprint FROM creations WHERE collection = ? AND id = ?",
                    arguments: [collection.name, id]) == creation
            guard same else {
                return .error(
                    409, "duplicate_id", "\(collection.name) \(id) already exists with other values", field: "id")
            }
            return BackendReply(status: 200, body: stored, etag: nil)
        }
        if try Bool.fetchOne(
            db, sql: "SELECT 1 FROM tombstones WHERE collection = ? AND id = ?", arguments: [collection.name, id])
            != nil
        {
            return .error(
                409, "duplicate_id", "\(collection.name) \(id) was deleted; an id is never used again", field: "id")
        }
        let now = Timestamp.now()
        let reply: BackendReply
        switch collection {
        case .clients:
            let client = Client(
                id: id, email: values["email"] ?? "", firstName: values["first_name"], lastName: values["last_name"],
                phone: values["phone"], company: values["company"], address: values["address"], city: values["city"],
                postcode: values["postcode"], notes: values["notes"], orderCount: 0, totalSpent: .zero, createdAt: now,
                updatedAt: now, version: 1)
            try save(client, db)
            reply = try .json(201, client, etag: 1)
        case .orders:
            let clientId = values["client_id"] ?? ""
            guard var client = try load(Client.self, id: clientId, db) else {
                return .error(422, "parent_not_found", "client \(clientId) does not exist", field: "client_id")
            }
            let location = try Self.directoryEntry(values["location_id"], Seeder.locations, field: "location_id")
            let user = try Self.directoryEntry(values["assigned_user_id"], Seeder.users, field: "assigned_user_id")
            if let refusal = location.refusal ?? user.refusal { return refusal }
            let order = Order(
                id: id, orderNumber: try nextOrderNumber(db), status: .parse(values["status"] ?? "booked_in"),
                total: nil, deposit: values["deposit"].flatMap { Money(exactly: $0) }, balance: nil,
                notes: values["notes"], clientId: clientId, clientName: client.fullName.isEmpty ? nil : client.fullName,
                clientEmail: client.email, clientPhone: client.phone, locationId: values["location_id"],
                locationName: location.name, assignedUserId: values["assigned_user_id"], assignedUserName: user.name,
                deviceCount: 0, createdAt: now, updatedAt: now, version: 1)
            try save(order, db)
            client.orderCount += 1
            client.version += 1
            client.updatedAt = now
            try save(client, db)
            reply = try .json(201, order, etag: 1)
        default:
            let orderId = values["order_id"] ?? ""
            guard var order = try load(Order.self, id: orderId, db) else {
                return .error(422, "parent_not_found", "order \(orderId) does not exist", field: "order_id")
            }
            let user = try Self.directoryEntry(values["assigned_user_id"], Seeder.users, field: "assigned_user_id")
            if let refusal = user.refusal { return refusal }
            let device = Device(
                id: id, orderId: orderId, type: values["type"] ?? "", brand: values["brand"], model: values["model"],
                serial: values["serial"], imei: values["imei"], passcode: values["passcode"],
                status: .parse(values["status"] ?? "booked_in"), issue: values["issue"], diagnosis: values["diagnosis"],
                resolution: values["resolution"], price: values["price"].flatMap { Money(exactly: $0) },
                assignedUserId: values["assigned_user_id"], createdAt: now, updatedAt: now, version: 1)
            try save(device, db)
            // The order's derived figures: its devices, their total, what is left to pay.
            let prices = try Data.fetchAll(
                db, sql: "SELECT body FROM records WHERE collection = 'devices' AND parent_id = ?", arguments: [orderId]
            ).map { try BackendJSON.decoder().decode(Device.self, from: $0).price }
            let priced = prices.compactMap { $0 }
            order.deviceCount = prices.count
            order.total = priced.isEmpty ? nil : priced.reduce(Money.zero, +)
            order.balance = order.total.map { $0 - (order.deposit ?? .zero) }
            order.version += 1
            order.updatedAt = now
            try save(order, db)
            reply = try .json(201, device, etag: 1)
        }
        try db.execute(
            sql: "INSERT INTO creations (collection, id, fingerprint) VALUES (?, ?, ?)",
            arguments: [collection.name, id, creation])
        return reply
    }

    /// A location's or a user's name from the server's own directory; an id it does not know is refused.
    private static func directoryEntry(_ id: String?, _ directory: [(String, String)], field: String) throws
        -> (name: String?, refusal: BackendReply?)
    {
        guard let id else { return (nil, nil) }
        guard let entry = directory.first(where: { $0.0 == id }) else {
            return (nil, .error(422, "invalid_value", "\(field) \(id) is not known to this server", field: field))
        }
        return (entry.1, nil)
    }

    /// The next order number: one more than the highest this server has given or stored.
    private func nextOrderNumber(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "UPDATE meta SET value = value + 1 WHERE key = 'max_order_number' RETURNING value")!
    }
}
