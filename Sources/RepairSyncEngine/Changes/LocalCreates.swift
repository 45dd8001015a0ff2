internal import Foundation
internal import GRDB
public import RepairSyncModels
internal import RepairSyncStore

/// Booking in while the internet is down: clients, orders and devices created here, in the replica at once and
/// queued in the same transaction (durable when the call returns), pushed parent-first when the API is reachable.
///
/// The id is a UUID made here (or by the caller), so no local-to-server id mapping is ever needed; the server
/// assigns what is its own — an order's number, the derived fields — and its reply replaces the local row. Until
/// then a new order has no number (`order_number` NULL, shown `#pending`).
extension LocalChanges {
    /// A record to create: its id (a UUID; made here when nil) and its fields by API name (`NewRecordShape`).
    public struct NewRecord: Sendable, Hashable {
        public var id: String?
        public var fields: FieldValues

        public init(id: String? = nil, fields: FieldValues) {
            self.id = id
            self.fields = fields
        }
    }

    /// Creates a client here and queues its creation.
    ///
    /// Safe to repeat with the caller's id: the same call answers the client already written; the same id with
    /// other values is refused (`invalidValue` on `id`).
    public func createClient(_ new: NewRecord) throws -> Client {
        let fields = try validated(new.fields, .client)
        let id = try Self.newId(new.id)
        let now = clock.now()
        return try store.write { db in
            if let existing = try Client.fetchOne(db, key: id) {
                try sameRecord(.client, id: id, given: fields, db)
                return existing
            }
            try Self.requireNewId(id)
            try Self.insertClient(id: id, fields, now: now, db)
            try Outbox.enqueueCreate(db, collection: .clients, id: id, fields: fields, dependsOn: nil, now: now)
            return try Client.fetchOne(db, key: id)!
        }
    }

    /// Creates an order (and its devices, if any) for a client in the replica, and queues their creation in one
    /// transaction. A repeated call with the same order id answers the order as it was booked (its devices
    /// included) and creates nothing.
    public func createOrder(_ new: NewRecord, devices: [NewRecord] = []) throws -> (order: Order, devices: [Device]) {
        let fields = try validated(new.fields, .order)
        var deviceFields: [FieldValues] = []
        for device in devices {
            guard device.fields["order_id"] == nil else {
                throw EngineError.invalidValue(field: "devices", reason: "a device of a new order takes the order's id")
            }
            deviceFields.append(try validated(device.fields.merging(["order_id": "-"]) { $1 }, .device))
        }
        let deviceValues = deviceFields
        let id = try Self.newId(new.id)
        let deviceIds = try devices.map { try Self.newId($0.id) }
        guard Set(deviceIds).count == deviceIds.count else {
            throw EngineError.invalidValue(field: "devices", reason: "two devices with the same id")
        }
        let now = clock.now()
        return try store.write { db in
            if try Order.fetchOne(db, key: id) != nil {
                try sameRecord(.order, id: id, given: fields, db)
                return (try Order.fetchOne(db, key: id)!, try Self.devices(ofOrder: id, db))
            }
            try Self.requireNewId(id)
            for deviceId in deviceIds { try Self.requireNewId(deviceId) }
            let dependsOn = try parentKey(.order, fields, db)
            try Self.insertOrder(id: id, fields, now: now, db)
            try Outbox.enqueueCreate(db, collection: .orders, id: id, fields: fields, dependsOn: dependsOn, now: now)
            for (deviceId, var values) in zip(deviceIds, deviceValues) {
                values["order_id"] = id
                guard try Device.fetchOne(db, key: deviceId) == nil else {
                    throw EngineError.invalidValue(field: "devices", reason: "device \(deviceId) already exists")
                }
                try insertDevice(id: deviceId, values, now: now, db)
            }
            try Self.refreshLocalOrder(id, db)
            return (try Order.fetchOne(db, key: id)!, try Self.devices(ofOrder: id, db))
        }
    }

    /// Creates a device on an order in the replica (booked in here or on the server) and queues its creation.
    /// Safe to repeat with the caller's id, as `createClient`.
    public func createDevice(_ new: NewRecord) throws -> Device {
        let fields = try validated(new.fields, .device)
        let id = try Self.newId(new.id)
        let now = clock.now()
        return try store.write { db in
            if let existing = try Device.fetchOne(db, key: id) {
                try sameRecord(.device, id: id, given: fields, db)
                return existing
            }
            try Self.requireNewId(id)
            try insertDevice(id: id, fields, now: now, db)
            if let orderId = fields["order_id"] ?? nil { try Self.refreshLocalOrder(orderId, db) }
            return try Device.fetchOne(db, key: id)!
        }
    }

    // MARK: Rows another program inserted

    /// `queueChange` for `client-created`, `order-created`, `device-created`: another program inserted the row
    /// (`synced_at` NULL, `order_number` NULL); its creation is queued from what the row holds, after its parent's
    /// when the parent was inserted the same way and not queued yet. A row already queued and never sent takes the
    /// row's values again (or, unchanged, answers the change that holds it, as does one already sent); one from the
    /// server is a no-op that says so.
    func queueCreate(_ collection: SyncCollection, id: String) async throws -> QueueResult {
        let cipher = cipher
        let now = clock.now()
        return try await store.groupCommit.write(reporting: true) { db in
            guard
                let syncedAt = try Row.fetchOne(
                    db, sql: "SELECT synced_at FROM \(collection.name) WHERE id = ?", arguments: [id])
            else { throw EngineError.unknownRecord(collection: collection.name, id: id) }
            if (syncedAt[0] as String?) != nil {
                return .nothingChanged(.onServer, reason: "\(collection.name) \(id) came from the server")
            }
            if let create = try Outbox.createEntry(db, collection: collection, id: id) {
                guard !create.sent, create.state == .pending || create.state == .dead else {
                    // Given up on while in doubt: dead, waiting for a person, like a refused one.
                    guard create.isLive else {
                        return .nothingChanged(
                            .dead(seq: create.seq), reason: LocalChanges.deadReason("\(collection.name) \(id)", create))
                    }
                    // In flight or in doubt: it will reach the server (or has) with the values it left with.
                    return .alreadyQueued(seq: create.seq, fields: create.fields.keys.sorted())
                }
                let fields = try Self.createFields(fromRow: collection, id: id, cipher: cipher, db)
                let changed = Set(fields.keys).union(create.fields.keys)
                    .filter { (fields[$0] ?? nil) != (create.fields[$0] ?? nil) }
                guard !changed.isEmpty else {
                    guard create.isLive else {
                        return .nothingChanged(
                            .dead(seq: create.seq), reason: LocalChanges.deadReason("\(collection.name) \(id)", create))
                    }
                    return .alreadyQueued(seq: create.seq, fields: create.fields.keys.sorted())
                }
                try Outbox.rewriteUnsentCreate(db, seq: create.seq, fields: fields, now: now)
                return .queued(seq: create.seq, fields: changed.sorted())
            }
            let entry = try Self.queueCreateFromRow(collection, id: id, cipher: cipher, now: now, db)
            return .queued(seq: entry.seq, fields: entry.fields.keys.sorted())
        }
    }

    /// A row another program inserted (not from the server: `synced_at` NULL, no server copy) whose creation is not
    /// queued yet.
    static func isUnqueuedInsert(_ collection: SyncCollection, id: String, _ db: Database) throws -> Bool {
        guard NewRecordShape.of(collection) != nil,
            try String?.fetchOne(db, sql: "SELECT synced_at FROM \(collection.name) WHERE id = ?", arguments: [id])
                == .some(nil),
            try BaseCopies.load(db, collection: collection, id: id) == nil
        else { return false }
        return try Outbox.createEntry(db, collection: collection, id: id) == nil
    }

    /// Queues the creation of a row another program inserted, from what it holds (its parent's first when that is
    /// a row inserted the same way and not queued yet).
    @discardableResult
    static func queueCreateFromRow(
        _ collection: SyncCollection, id: String, cipher: PasscodeCipher?, now: Timestamp, _ db: Database,
        depth: Int = 0
    ) throws -> OutboxEntry {
        guard let shape = NewRecordShape.of(collection) else {
            throw EngineError.invalidValue(field: "kind", reason: "\(collection.name) cannot be created here")
        }
        try requireNewId(id)
        let fields = try createFields(fromRow: collection, id: id, cipher: cipher, db)
        var dependsOn: String?
        // A parent the replica does not hold (deleted on the server after the row was written, or never there) is
        // the server's to judge: the create goes without waiting, and its refusal (`parent_not_found`) makes it
        // dead with the reason — visible, discardable — rather than a row no one is told about.
        if let parent = shape.parent, let parentId = fields[parent.field] ?? nil,
            let synced = try Row.fetchOne(
                db, sql: "SELECT synced_at FROM \(parent.collection.name) WHERE id = ?", arguments: [parentId])
        {
            if let create = try Outbox.createEntry(db, collection: parent.collection, id: parentId) {
                dependsOn = create.orderKey
            } else if (synced[0] as String?) == nil, depth < 3 {
                dependsOn = try queueCreateFromRow(
                    parent.collection, id: parentId, cipher: cipher, now: now, db, depth: depth + 1
                ).orderKey
            }
        }
        return try Outbox.enqueueCreate(
            db, collection: collection, id: id, fields: fields, dependsOn: dependsOn, now: now)
    }

    /// The create body a row holds (without the id): its non-null fields of the shape, money in canonical form, a
    /// device's passcode as sealed in the replica. Refuses what the server would refuse, naming the field.
    static func createFields(
        fromRow collection: SyncCollection, id: String, cipher: PasscodeCipher?, _ db: Database
    ) throws -> FieldValues {
        guard let shape = NewRecordShape.of(collection) else {
            throw EngineError.invalidValue(field: "kind", reason: "\(collection.name) cannot be created here")
        }
        guard NewRecordShape.isClientId(id) else {
            throw EngineError.invalidValue(field: "id", reason: NewRecordShape.newIdProblem(id))
        }
        let extra = collection == .orders ? ", order_number" : ""
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT \(shape.fields.joined(separator: ", "))\(extra) FROM \(collection.name) WHERE id = ?",
                arguments: [id])
        else { throw EngineError.unknownRecord(collection: collection.name, id: id) }
        if collection == .orders, (row["order_number"] as Int?) != nil {
            throw EngineError.invalidValue(
                field: "order_number", reason: "is the server's to assign: an order booked in here leaves it NULL")
        }
        var fields: FieldValues = [:]
        for name in shape.fields { if let value = row[name] as String? { fields[name] = value } }
        if let sealed = fields["passcode"] ?? nil, cipher?.open(sealed) == nil {
            throw EngineError.invalidValue(
                field: "passcode",
                reason: "is not sealed with the daemon's key: leave it NULL, or book the device in with createDevice")
        }
        return try validate(fields, shape, sealedPasscode: true, cipher: cipher)
    }

    // MARK: Validation

    /// The fields of a new record as the API will take them, or the first problem, naming the field.
    func validated(_ fields: FieldValues, _ shape: NewRecordShape) throws -> FieldValues {
        try Self.validate(fields, shape, sealedPasscode: false, cipher: cipher)
    }

    static func validate(
        _ given: FieldValues, _ shape: NewRecordShape, sealedPasscode: Bool, cipher: PasscodeCipher?
    ) throws -> FieldValues {
        var fields: FieldValues = [:]
        for (name, value) in given.sorted(by: { $0.key < $1.key }) {
            guard shape.fields.contains(name) else {
                throw EngineError.invalidValue(
                    field: name,
                    reason:
                        "not a field of a new \(shape.collection.singular); fields: \(shape.fields.joined(separator: ", "))"
                )
            }
            guard let value else { continue }
            try LocalChanges.checkLength(name, value)
            if shape.money.contains(name) {
                guard let money = Money(exactly: value), money >= .zero else {
                    throw EngineError.invalidValue(
                        field: name, reason: "\(value) is not an amount (plain decimal, not negative)")
                }
                fields[name] = money.canonicalText
            } else {
                fields[name] = value
            }
        }
        for name in shape.required where (fields[name] ?? nil).map({ $0.allSatisfy(\.isWhitespace) }) ?? true {
            throw EngineError.invalidValue(field: name, reason: "is required")
        }
        if let email = fields["email"] ?? nil, !email.contains("@") {
            throw EngineError.invalidValue(field: "email", reason: "\(email) is not an email address")
        }
        if shape.collection == .orders || shape.collection == .devices {
            let status = (fields["status"] ?? nil) ?? "booked_in"
            try LocalChanges.validateStatus(shape.collection, status)
            // Always sent, so that the create says what the row shows.
            fields["status"] = status
        }
        if let passcode = fields["passcode"] ?? nil, !sealedPasscode {
            guard let cipher else {
                throw EngineError.invalidValue(
                    field: "passcode",
                    reason: "no passcode key is configured (store.passcode_key_file), so a passcode cannot be kept")
            }
            fields["passcode"] = cipher.seal(passcode)
        }
        return fields
    }

    /// The caller's id (or a new one) when it is a UUID. Whether it may name a new record (`requireNewId`) is asked
    /// once the replica shows it is new: a call repeated with an id from before ids had to be lowercase still
    /// answers the record it made.
    static func newId(_ given: String?) throws -> String {
        let id = given ?? UUID().uuidString.lowercased()
        guard NewRecordShape.isClientId(id) else {
            throw EngineError.invalidValue(field: "id", reason: NewRecordShape.newIdProblem(id))
        }
        return id
    }

    /// Refuses an id a new record or message may not have (`NewRecordShape.isNewId`: capitals), naming its
    /// lowercase form.
    static func requireNewId(_ id: String) throws {
        guard NewRecordShape.isNewId(id) else {
            throw EngineError.invalidValue(field: "id", reason: NewRecordShape.newIdProblem(id))
        }
    }

    /// A repeated create with an id already in the replica: the same values (those the shop cannot change later) —
    /// a caller retrying after a lost reply — or a refusal naming the id.
    private func sameRecord(_ shape: NewRecordShape, id: String, given: FieldValues, _ db: Database) throws {
        let editable: Set<String> =
            switch shape.collection {
            case .orders: Set(Order.editableFields)
            case .devices: Set(Device.editableFields)
            default: []
            }
        let names = shape.fields.filter { !editable.contains($0) }
        guard
            let row = try Row.fetchOne(
                db,
                sql: "SELECT \(names.joined(separator: ", ")), synced_at FROM \(shape.collection.name) WHERE id = ?",
                arguments: [id])
        else { return }
        // Once the server has made the record, the row is its copy, and a server may store a value as it likes it
        // (trimmed, in lower case): what was sent is compared loosely then, so that a call repeated after a lost
        // reply still answers the record, and only another booking under the same id is refused.
        let onServer = (row["synced_at"] as String?) != nil
        for name in names {
            var stored = row[name] as String?
            var wanted = given[name] ?? nil
            if name == "passcode" {
                stored = cipher?.open(stored)
                wanted = cipher?.open(wanted)
            }
            if shape.money.contains(name) { stored = stored.flatMap { Money(exactly: $0)?.canonicalText } ?? stored }
            if onServer {
                stored = Self.loosely(stored)
                wanted = Self.loosely(wanted)
            }
            guard stored == wanted else {
                throw EngineError.invalidValue(
                    field: "id", reason: "\(shape.collection.singular) \(id) already exists with another \(name)")
            }
        }
    }

    /// A value as a server might have stored it: its words separated by single spaces, in lower case; nil when
    /// there are none.
    static func loosely(_ value: String?) -> String? {
        guard let value else { return nil }
        let words = value.split(whereSeparator: \.isWhitespace)
        return words.isEmpty ? nil : words.joined(separator: " ").lowercased()
    }

    /// The order key a new child's create waits for: its parent's create, when the parent was created here and the
    /// server has not acknowledged it (a parent inserted by another program and never queued is queued first).
    private func parentKey(_ shape: NewRecordShape, _ fields: FieldValues, _ db: Database) throws -> String? {
        guard let parent = shape.parent, let parentId = fields[parent.field] ?? nil else { return nil }
        guard
            let synced = try Row.fetchOne(
                db, sql: "SELECT synced_at FROM \(parent.collection.name) WHERE id = ?", arguments: [parentId])
        else { throw EngineError.unknownRecord(collection: parent.collection.name, id: parentId) }
        if let create = try Outbox.createEntry(db, collection: parent.collection, id: parentId) {
            return create.orderKey
        }
        guard (synced[0] as String?) == nil else { return nil }
        return try Self.queueCreateFromRow(parent.collection, id: parentId, cipher: cipher, now: clock.now(), db)
            .orderKey
    }

    // MARK: Rows

    private static func insertClient(id: String, _ fields: FieldValues, now: Timestamp, _ db: Database) throws {
        let client = Client(
            id: id, email: (fields["email"] ?? nil) ?? "", firstName: fields["first_name"] ?? nil,
            lastName: fields["last_name"] ?? nil, phone: fields["phone"] ?? nil, company: fields["company"] ?? nil,
            address: fields["address"] ?? nil, city: fields["city"] ?? nil, postcode: fields["postcode"] ?? nil,
            notes: fields["notes"] ?? nil, orderCount: 0, totalSpent: .zero, createdAt: now, updatedAt: now, version: 0)
        try client.upsert(db, syncedAt: nil)
    }

    /// A new order's row: the client's name and contact as the server will denormalise them (until its reply
    /// replaces the row), no number, no devices yet.
    private static func insertOrder(id: String, _ fields: FieldValues, now: Timestamp, _ db: Database) throws {
        let clientId = (fields["client_id"] ?? nil) ?? ""
        let client = try Client.fetchOne(db, key: clientId)
        let order = Order(
            id: id, orderNumber: nil, status: .parse((fields["status"] ?? nil) ?? "booked_in"), total: nil,
            deposit: (fields["deposit"] ?? nil).flatMap { Money(exactly: $0) }, balance: nil,
            notes: fields["notes"] ?? nil, clientId: clientId,
            clientName: client.map(\.fullName).flatMap { $0.isEmpty ? nil : $0 },
            clientEmail: client?.email, clientPhone: client?.phone, locationId: fields["location_id"] ?? nil,
            locationName: nil, assignedUserId: fields["assigned_user_id"] ?? nil, assignedUserName: nil,
            deviceCount: 0, createdAt: now, updatedAt: now, version: 0)
        try order.upsert(db, syncedAt: nil)
    }

    /// Writes a new device's row and queues its creation (after its order's, when the order is new too).
    private func insertDevice(id: String, _ fields: FieldValues, now: Timestamp, _ db: Database) throws {
        let dependsOn = try parentKey(.device, fields, db)
        let device = Device(
            id: id, orderId: (fields["order_id"] ?? nil) ?? "", type: (fields["type"] ?? nil) ?? "",
            brand: fields["brand"] ?? nil, model: fields["model"] ?? nil, serial: fields["serial"] ?? nil,
            imei: fields["imei"] ?? nil, passcode: fields["passcode"] ?? nil,
            status: .parse((fields["status"] ?? nil) ?? "booked_in"), issue: fields["issue"] ?? nil,
            diagnosis: fields["diagnosis"] ?? nil, resolution: fields["resolution"] ?? nil,
            price: (fields["price"] ?? nil).flatMap { Money(exactly: $0) },
            assignedUserId: fields["assigned_user_id"] ?? nil,
            createdAt: now, updatedAt: now, version: 0)
        // The passcode is already sealed: written as it is.
        try device.upsert(db, syncedAt: nil)
        try Outbox.enqueueCreate(db, collection: .devices, id: id, fields: fields, dependsOn: dependsOn, now: now)
    }

    /// An order the server has not created yet shows its devices' count and total as the server will derive them
    /// (docs/api.md section 4.7); an order from the server keeps the server's figures until its next copy.
    static func refreshLocalOrder(_ id: String, _ db: Database) throws {
        guard
            let row = try Row.fetchOne(db, sql: "SELECT deposit, synced_at FROM orders WHERE id = ?", arguments: [id]),
            (row["synced_at"] as String?) == nil
        else { return }
        let prices = try String?.fetchAll(db, sql: "SELECT price FROM devices WHERE order_id = ?", arguments: [id])
        let amounts = prices.compactMap { $0.flatMap { Money(exactly: $0) } }
        let total = amounts.isEmpty ? nil : amounts.reduce(Money.zero, +)
        let deposit = (row["deposit"] as String?).flatMap { Money(exactly: $0) } ?? .zero
        try db.execute(
            sql: "UPDATE orders SET device_count = ?, total = ?, balance = ? WHERE id = ?",
            arguments: [prices.count, total?.canonicalText, total.map { ($0 - deposit).canonicalText }, id])
    }

    static func devices(ofOrder id: String, _ db: Database) throws -> [Device] {
        try Device.fetchAll(
            db, sql: "SELECT * FROM devices WHERE order_id = ? ORDER BY created_at, id", arguments: [id])
    }
}

extension SyncCollection {
    /// "client", "order", "device": for messages.
    var singular: String {
        switch self {
        case .clients: "client"
        case .orders: "order"
        case .devices: "device"
        case .tickets: "ticket"
        case .ticketMessages: "ticket message"
        }
    }
}
