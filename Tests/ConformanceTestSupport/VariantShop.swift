internal import Foundation
internal import RepairSyncModels
internal import RepairSyncProtocol

/// The data and rules of `VariantServer`: a Repair Minder API written apart from repair-api-dev, that differs from
/// it only where docs/api.md lets a server differ —
///
/// - cursors are bare integers (`"17"`), the position of the last entry delivered;
/// - a page holds at most 7 entries whatever the `limit` (shorter than asked is allowed);
/// - money is a JSON number with exact digits (`149.99`), not a string;
/// - records carry keys the contract does not name, first and last, and keys come in another order;
/// - statuses outside the contract's known sets (`on_hold`, `awaiting_customer`, `escalated`), which it also
///   accepts in a PATCH;
/// - timestamps in another offset with six fraction digits (`2026-11-22T14:05:09.120000+01:00`);
/// - `Content-Type: application/json` without a charset, `WWW-Authenticate: Bearer realm="variant"`.
struct VariantShop: Sendable {
    typealias Members = [(key: String, value: JSONValue)]

    struct Reply: Sendable {
        var status: Int
        var body: JSONValue
        var headers: [(String, String)] = []
    }

    private struct Stored: Sendable {
        var seq: Int
        var members: Members
    }

    private struct Remembered: Sendable {
        var fingerprint: String
        var reply: Reply
    }

    private var records: [SyncCollection: [String: Stored]] = [:]
    private var tombstones: [SyncCollection: [String: (seq: Int, deletedAt: String)]] = [:]
    private var sequence = 0
    private var keys: [String: Remembered] = [:]
    /// `collection/id` → the body each create was made with (canonical), to tell a repeat from a duplicate.
    private var creations: [String: String] = [:]
    private var nextOrderNumber = 6000
    private let base: Int64 = 1_700_000_000_000

    static let orderStatuses = [
        "booked_in", "in_progress", "awaiting_parts", "ready", "collected", "cancelled", "on_hold",
    ]
    static let deviceStatuses = [
        "booked_in", "diagnosing", "awaiting_approval", "approved", "in_repair", "awaiting_parts", "repaired",
        "quality_check", "ready", "collected", "unrepairable", "awaiting_customer",
    ]

    init() {
        for i in 1...12 {
            save(
                .clients, "cli_v\(i)",
                [
                    ("x_variant_revision", .string("r2")), ("id", .string("cli_v\(i)")),
                    ("email", .string("client\(i)@example.com")), ("first_name", .string("Client")),
                    ("last_name", .string("Number \(i)")),
                    ("phone", i % 3 == 0 ? .null : .string("+44 20 7946 00\(i)")),
                    ("company", .null), ("address", .string("\(i) Marsh Lane")), ("city", .string("London")),
                    ("postcode", .string("N1 7AA")), ("notes", .null), ("order_count", .number(String(i % 4))),
                    ("total_spent", .number(Self.amount(cents: 41_250 + i * 1_001))),
                    ("created_at", stamp(-86_400_000 * Int64(40 - i))),
                    ("updated_at", stamp(-86_400_000 * Int64(20 - i))),
                    ("version", .number(String(1 + i % 3))), ("shop_extra", .object(["loyalty": .bool(i % 2 == 0)])),
                ])
        }
        for i in 1...20 {
            let total = 1_999 + i * 737
            let deposit = i % 3 == 0 ? nil : 500 + i * 10
            save(
                .orders, "ord_v\(i)",
                [
                    ("version", .number("1")), ("id", .string("ord_v\(i)")),
                    ("order_number", .number(String(5000 + i))),
                    ("status", .string(Self.orderStatuses[i % Self.orderStatuses.count])),
                    ("total", .number(Self.amount(cents: total))),
                    ("deposit", deposit.map { .number(Self.amount(cents: $0)) } ?? .null),
                    ("balance", .number(Self.amount(cents: total - (deposit ?? 0)))),
                    ("notes", i % 2 == 0 ? .null : .string("Variant order \(i)")),
                    ("client_id", .string("cli_v\(1 + i % 12)")),
                    ("client_name", .string("Client Number \(1 + i % 12)")),
                    ("client_email", .string("client\(1 + i % 12)@example.com")), ("client_phone", .null),
                    ("location_id", .string("loc_1")), ("location_name", .string("High Street")),
                    ("assigned_user_id", .null), ("assigned_user_name", .null), ("device_count", .number("1")),
                    ("created_at", stamp(-86_400_000 * Int64(30 - i))),
                    ("updated_at", stamp(-3_600_000 * Int64(30 - i))),
                    ("x_variant_channel", .string(i % 2 == 0 ? "walk_in" : "online")),
                ])
        }
        for i in 1...30 {
            save(
                .devices, "dev_v\(i)",
                [
                    ("id", .string("dev_v\(i)")), ("order_id", .string("ord_v\(1 + i % 20)")),
                    ("type", .string("phone")),
                    ("brand", .string("Apple")), ("model", .string("iPhone \(10 + i % 6)")), ("serial", .null),
                    ("imei", .string("3567891045\(10_000 + i)")), ("passcode", .null),
                    ("status", .string(Self.deviceStatuses[i % Self.deviceStatuses.count])),
                    ("issue", .string("Cracked screen")),
                    ("diagnosis", i % 4 == 0 ? .string("Digitiser damaged") : .null),
                    ("resolution", .null),
                    ("price", i % 5 == 0 ? .null : .number(Self.amount(cents: 2_999 + i * 1_250))),
                    ("assigned_user_id", .string("usr_v7")), ("created_at", stamp(-86_400_000 * Int64(30 - i % 20))),
                    ("updated_at", stamp(-1_800_000 * Int64(40 - i))), ("version", .number("2")),
                    ("x_variant_bench", .number(String(i % 3))),
                ])
        }
        for i in 1...10 {
            save(
                .tickets, "tkt_v\(i)",
                [
                    ("id", .string("tkt_v\(i)")), ("ticket_number", .number(String(300 + i))),
                    ("subject", .string("Variant question \(i)")),
                    ("status", .string(["open", "pending", "closed", "escalated"][i % 4])),
                    ("priority", .string("normal")), ("client_id", .string("cli_v\(i)")),
                    ("client_email", .string("client\(i)@example.com")), ("client_name", .null),
                    ("assigned_user_id", .null), ("assigned_user_name", .null),
                    ("order_id", i % 2 == 0 ? .string("ord_v\(i)") : .null),
                    ("order_ref", i % 2 == 0 ? .string("#\(5000 + i)") : .null),
                    ("message_count", .number("2")), ("last_message_at", stamp(-600_000 * Int64(20 - i))),
                    ("created_at", stamp(-86_400_000 * Int64(12 - i))), ("updated_at", stamp(-600_000 * Int64(20 - i))),
                    ("version", .number("3")),
                ])
        }
        for i in 1...20 {
            let id = String(format: "00000000-0000-4000-8000-%012d", i)
            save(
                .ticketMessages, id,
                [
                    ("id", .string(id)), ("ticket_id", .string("tkt_v\(1 + i % 10)")),
                    ("content", .string("Variant message \(i)")),
                    ("sender_type", .string(i % 2 == 0 ? "staff" : "client")),
                    ("sender_name", .null), ("sender_id", .null), ("is_internal", .bool(false)),
                    ("created_at", stamp(-600_000 * Int64(30 - i))), ("updated_at", stamp(-600_000 * Int64(30 - i))),
                    ("version", .number("1")),
                ])
        }
        // Deleted on the server: an order with its device, and a message.
        delete(.devices, "dev_v19")
        delete(.orders, "ord_v20")
        delete(.ticketMessages, String(format: "00000000-0000-4000-8000-%012d", 7))
    }

    /// `12345` cents → `123.45` (as written: exact digits, JSON number).
    static func amount(cents: Int) -> String {
        let sign = cents < 0 ? "-" : ""
        let value = abs(cents)
        return "\(sign)\(value / 100).\(String(format: "%02d", value % 100))"
    }

    /// A timestamp `offsetMilliseconds` from the shop's base time, in +01:00 with six fraction digits.
    private func stamp(_ offsetMilliseconds: Int64) -> JSONValue {
        .string(Self.rfc3339(Timestamp(millisecondsSince1970: base + offsetMilliseconds)))
    }

    static func rfc3339(_ time: Timestamp) -> String {
        String(time.adding(milliseconds: 3_600_000).rfc3339.dropLast()) + "000+01:00"
    }

    private mutating func save(_ collection: SyncCollection, _ id: String, _ members: Members) {
        sequence += 1
        records[collection, default: [:]][id] = Stored(seq: sequence, members: members)
        tombstones[collection]?[id] = nil
    }

    private mutating func delete(_ collection: SyncCollection, _ id: String) {
        records[collection]?[id] = nil
        sequence += 1
        tombstones[collection, default: [:]][id] = (sequence, Self.rfc3339(Timestamp(millisecondsSince1970: base)))
    }

    // MARK: Endpoints

    func changes(_ collection: SyncCollection, cursor cursorText: String?, limit limitText: String?) -> Reply {
        var limit = 500
        if let limitText {
            guard let value = Int(limitText), (1...1000).contains(value) else {
                return Self.error(400, "invalid_request", "limit must be 1 to 1000", field: "limit")
            }
            limit = value
        }
        var after = 0
        if let cursorText {
            guard let value = Int(cursorText), value >= 0, value <= sequence else {
                return Self.error(410, "cursor_expired", "unknown cursor; read \(collection.name) from the start")
            }
            after = value
        }
        let live = (records[collection] ?? [:]).map {
            (seq: $0.value.seq, record: JSONValue.object($0.value.members), tombstone: JSONValue?.none)
        }
        let gone = (tombstones[collection] ?? [:]).map {
            (
                seq: $0.value.seq, record: JSONValue.null,
                tombstone: JSONValue?.some(
                    .object([("deleted_at", .string($0.value.deletedAt)), ("id", .string($0.key))]))
            )
        }
        let pending = (live + gone).filter { $0.seq > after }.sorted { $0.seq < $1.seq }
        let page = pending.prefix(min(limit, 7))
        let next = page.last?.seq ?? after
        return Reply(
            status: 200,
            body: .object([
                ("has_more", .bool(pending.count > page.count)), ("next_cursor", .string(String(next))),
                ("data", .array(page.filter { $0.tombstone == nil }.map(\.record))),
                ("deleted", .array(page.compactMap(\.tombstone))),
            ]))
    }

    func record(_ collection: SyncCollection, _ id: String) -> Reply {
        guard let stored = records[collection]?[id] else {
            return Self.error(404, "not_found", "no \(collection.name) \(id)")
        }
        let version = JSONValue.object(stored.members)["version"]?.intValue ?? 0
        return Reply(status: 200, body: .object(stored.members), headers: [("ETag", "\"\(version)\"")])
    }

    mutating func patch(
        _ collection: SyncCollection, _ id: String, body: Data, ifMatch: String?, key: String?, path: String
    ) -> Reply {
        remembering(key: key, fingerprint: "PATCH \(path) \(Self.canonical(body))") { shop in
            shop.applyPatch(collection, id, body: body, ifMatch: ifMatch)
        }
    }

    private mutating func applyPatch(_ collection: SyncCollection, _ id: String, body: Data, ifMatch: String?) -> Reply
    {
        let allowed: [String: [String]?] =
            collection == .orders
            ? ["status": Self.orderStatuses, "notes": nil]
            : ["status": Self.deviceStatuses, "diagnosis": nil, "resolution": nil]
        guard let fields = (try? JSONParser().parse(body))?.objectMembers, !fields.isEmpty else {
            return Self.error(400, "invalid_request", "the body must be a JSON object with a field")
        }
        for (name, value) in fields {
            guard let rule = allowed[name] else {
                return Self.error(422, "invalid_field", "\(name) cannot be changed", field: name)
            }
            if let statuses = rule {
                guard let status = value.stringValue, statuses.contains(status) else {
                    return Self.error(422, "invalid_value", "not a status this shop uses", field: name)
                }
            } else if value.stringValue == nil && value != .null {
                return Self.error(422, "invalid_value", "\(name) must be text or null", field: name)
            }
        }
        var expected: Int?
        if var text = ifMatch?.trimmingCharacters(in: .whitespaces) {
            if text.hasPrefix("W/") { text.removeFirst(2) }
            text = text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard let version = Int(text) else {
                return Self.error(400, "invalid_request", "If-Match must be a version", field: "If-Match")
            }
            expected = version
        }
        guard var stored = records[collection]?[id] else {
            return Self.error(404, "not_found", "no \(collection.name) \(id)")
        }
        let version = JSONValue.object(stored.members)["version"]?.intValue ?? 0
        if let expected, expected != version {
            return Reply(
                status: 412,
                body: .object([
                    ("current", .object(stored.members)),
                    (
                        "error",
                        .object([("code", .string("version_mismatch")), ("message", .string("version is \(version)"))])
                    ),
                ]))
        }
        for (name, value) in fields { Self.set(&stored.members, name, value) }
        Self.set(&stored.members, "version", .number(String(version + 1)))
        Self.set(&stored.members, "updated_at", .string(Self.rfc3339(.now())))
        save(collection, id, stored.members)
        return Reply(status: 200, body: .object(stored.members), headers: [("ETag", "\"\(version + 1)\"")])
    }

    mutating func postMessage(ticket: String, body: Data, key: String?, path: String) -> Reply {
        remembering(key: key, fingerprint: "POST \(path) \(Self.canonical(body))") { shop in
            shop.createMessage(ticket: ticket, body: body)
        }
    }

    private mutating func createMessage(ticket: String, body: Data) -> Reply {
        guard let fields = try? JSONParser().parse(body), fields.objectMembers != nil else {
            return Self.error(400, "invalid_request", "the body must be a JSON object")
        }
        guard let id = fields["id"]?.stringValue, UUID(uuidString: id) != nil else {
            return Self.error(422, "invalid_value", "id must be a UUID", field: "id")
        }
        guard let content = fields["content"]?.stringValue, !content.allSatisfy(\.isWhitespace), content.count <= 10_000
        else {
            return Self.error(422, "invalid_value", "content must be text", field: "content")
        }
        let internalNote = fields["is_internal"] ?? .bool(false)
        guard internalNote.boolValue != nil else {
            return Self.error(422, "invalid_value", "is_internal must be a boolean", field: "is_internal")
        }
        guard var stored = records[.tickets]?[ticket] else {
            return Self.error(404, "not_found", "no ticket \(ticket)")
        }
        let key = id.lowercased()
        if let existing = records[.ticketMessages]?[key] {
            let message = JSONValue.object(existing.members)
            guard message["ticket_id"]?.stringValue == ticket, message["content"]?.stringValue == content else {
                return Self.error(409, "duplicate_id", "another message has id \(id)", field: "id")
            }
            return Reply(status: 200, body: message)
        }
        let now = JSONValue.string(Self.rfc3339(.now()))
        let members: Members = [
            ("id", .string(id)), ("ticket_id", .string(ticket)), ("content", .string(content)),
            ("sender_type", .string("staff")), ("sender_name", .string("Variant Staff")),
            ("sender_id", .string("usr_v7")),
            ("is_internal", internalNote), ("created_at", now), ("updated_at", now), ("version", .number("1")),
            ("x_variant_channel", .string("api")),
        ]
        save(.ticketMessages, key, members)
        let ticketRecord = JSONValue.object(stored.members)
        Self.set(&stored.members, "message_count", .number(String((ticketRecord["message_count"]?.intValue ?? 0) + 1)))
        Self.set(&stored.members, "last_message_at", now)
        Self.set(&stored.members, "updated_at", now)
        Self.set(&stored.members, "version", .number(String((ticketRecord["version"]?.intValue ?? 0) + 1)))
        save(.tickets, ticket, stored.members)
        return Reply(status: 201, body: .object(members))
    }

    // MARK: Creates (docs/api.md section 4.7)

    mutating func create(_ collection: SyncCollection, body: Data, key: String?, path: String) -> Reply {
        remembering(key: key, fingerprint: "POST \(path) \(Self.canonical(body))") { shop in
            shop.applyCreate(collection, body: body)
        }
    }

    /// The keys a create may send (besides `id`), and which of them are money.
    private static let creatableKeys: [SyncCollection: [String]] = [
        .clients: ["email", "first_name", "last_name", "phone", "company", "address", "city", "postcode", "notes"],
        .orders: ["client_id", "status", "notes", "deposit", "location_id", "assigned_user_id"],
        .devices: [
            "order_id", "type", "brand", "model", "serial", "imei", "passcode", "status", "issue", "diagnosis",
            "resolution", "price", "assigned_user_id",
        ],
    ]

    private mutating func applyCreate(_ collection: SyncCollection, body: Data) -> Reply {
        guard let allowed = Self.creatableKeys[collection] else {
            return Self.error(405, "invalid_request", "\(collection.name) are not created this way")
        }
        guard let fields = (try? JSONParser().parse(body))?.objectMembers else {
            return Self.error(400, "invalid_request", "the body must be a JSON object")
        }
        var values: [String: JSONValue] = [:]
        for (name, value) in fields where name != "id" {
            guard allowed.contains(name) else {
                return Self.error(422, "invalid_field", "\(name) is not yours to send", field: name)
            }
            if ["deposit", "price"].contains(name), value != .null {
                let text = value.stringValue ?? (value.numberText ?? "")
                guard let amount = Decimal(string: text), amount >= 0, text.wholeMatch(of: /-?[0-9]+(\.[0-9]+)?/) != nil
                else {
                    return Self.error(422, "invalid_value", "\(name) must be an amount of at least zero", field: name)
                }
                values[name] = .number(text)
            } else {
                guard value.stringValue != nil || value == .null else {
                    return Self.error(422, "invalid_value", "\(name) must be text", field: name)
                }
                values[name] = value
            }
        }
        guard let id = fields.first(where: { $0.key == "id" })?.value.stringValue, UUID(uuidString: id) != nil else {
            return Self.error(422, "invalid_value", "id must be a UUID", field: "id")
        }
        let required =
            ["clients": ["email"], "orders": ["client_id"], "devices": ["order_id", "type"]][collection.name] ?? []
        for name in required where (values[name]?.stringValue ?? "").allSatisfy(\.isWhitespace) {
            return Self.error(422, "invalid_value", "\(name) is required", field: name)
        }
        let creation = Self.canonical(body)
        let key = id.lowercased()
        if let existing = records[collection]?[key] {
            guard creations["\(collection.name)/\(key)"] == creation else {
                return Self.error(409, "duplicate_id", "\(collection.name) \(id) exists", field: "id")
            }
            return Reply(status: 200, body: .object(existing.members))
        }
        if tombstones[collection]?[key] != nil {
            return Self.error(409, "duplicate_id", "\(collection.name) \(id) was deleted", field: "id")
        }
        let now = JSONValue.string(Self.rfc3339(.now()))
        func value(_ name: String) -> JSONValue { values[name] ?? .null }
        var members: Members
        switch collection {
        case .clients:
            members =
                [("x_variant_source", .string("api")), ("id", .string(key))]
                + Self.creatableKeys[.clients]!.map { ($0, value($0)) }
                + [("order_count", .number("0")), ("total_spent", .number("0.00"))]
        case .orders:
            let clientID = value("client_id").stringValue ?? ""
            guard var client = records[.clients]?[clientID] else {
                return Self.error(422, "parent_not_found", "no client \(clientID)", field: "client_id")
            }
            let parent = JSONValue.object(client.members)
            nextOrderNumber += 1
            members = [
                ("id", .string(key)), ("order_number", .number(String(nextOrderNumber))),
                ("status", values["status"] ?? .string("booked_in")), ("total", .null), ("deposit", value("deposit")),
                ("balance", .null), ("notes", value("notes")), ("client_id", .string(clientID)),
                (
                    "client_name",
                    .string("\(parent["first_name"]?.stringValue ?? "") \(parent["last_name"]?.stringValue ?? "")")
                ),
                ("client_email", parent["email"] ?? .null), ("client_phone", parent["phone"] ?? .null),
                ("location_id", value("location_id")), ("location_name", .null),
                ("assigned_user_id", value("assigned_user_id")), ("assigned_user_name", .null),
                ("device_count", .number("0")),
            ]
            Self.set(&client.members, "order_count", .number(String((parent["order_count"]?.intValue ?? 0) + 1)))
            bump(&client, at: now)
            save(.clients, clientID, client.members)
        default:
            let orderID = value("order_id").stringValue ?? ""
            guard var order = records[.orders]?[orderID] else {
                return Self.error(422, "parent_not_found", "no order \(orderID)", field: "order_id")
            }
            members = [("id", .string(key))] + Self.creatableKeys[.devices]!.map { ($0, value($0)) }
            members.removeAll { $0.key == "status" }
            members.append(("status", values["status"] ?? .string("booked_in")))
            // The order's derived figures, over its devices (this one included), in cents.
            let prices =
                (records[.devices] ?? [:]).values.map { JSONValue.object($0.members) }
                .filter { $0["order_id"]?.stringValue == orderID }.map { $0["price"] } + [values["price"]]
            let cents = prices.compactMap { price -> Int? in
                guard let text = price?.numberText ?? price?.stringValue, let amount = Decimal(string: text) else {
                    return nil
                }
                return NSDecimalNumber(decimal: amount * 100).intValue
            }
            let record = JSONValue.object(order.members)
            let deposit =
                (record["deposit"]?.numberText).flatMap { Decimal(string: $0) }.map {
                    NSDecimalNumber(decimal: $0 * 100).intValue
                } ?? 0
            Self.set(&order.members, "device_count", .number(String(prices.count)))
            Self.set(&order.members, "total", cents.isEmpty ? .null : .number(Self.amount(cents: cents.reduce(0, +))))
            Self.set(
                &order.members, "balance",
                cents.isEmpty ? .null : .number(Self.amount(cents: cents.reduce(0, +) - deposit)))
            bump(&order, at: now)
            save(.orders, orderID, order.members)
        }
        members += [("created_at", now), ("updated_at", now), ("version", .number("1"))]
        save(collection, key, members)
        creations["\(collection.name)/\(key)"] = creation
        return Reply(status: 201, body: .object(members), headers: [("ETag", "\"1\"")])
    }

    /// A server-side write of a parent: version + 1, `updated_at` now.
    private func bump(_ stored: inout Stored, at now: JSONValue) {
        let version = JSONValue.object(stored.members)["version"]?.intValue ?? 0
        Self.set(&stored.members, "version", .number(String(version + 1)))
        Self.set(&stored.members, "updated_at", now)
    }

    static func dashboard(period: String?) -> Reply {
        let name = period ?? "today"
        let earlier = ["today": "previous_day", "week": "previous_week", "month": "previous_month"]
        guard let previous = earlier[name] else {
            return error(400, "invalid_request", "period must be today, week or month", field: "period")
        }
        func counted(_ current: Int, _ before: Int) -> JSONValue {
            .object([
                ("current", .number(String(current))),
                (
                    "comparisons",
                    .array([
                        .object([
                            ("period", .string(previous)), ("count", .number(String(before))),
                            ("change", .number(String(current - before))),
                            ("change_percent", before == 0 ? .null : .number("12.5")),
                        ])
                    ])
                ),
            ])
        }
        return Reply(
            status: 200,
            body: .object([
                ("period", .string(name)), ("devices", counted(9, 8)),
                (
                    "revenue",
                    .object([
                        ("current", .number("1234.56")),
                        (
                            "comparisons",
                            .array([
                                .object([
                                    ("period", .string(previous)), ("total", .number("1000.06")),
                                    ("change", .number("234.5")),
                                    ("change_percent", .number("23.45")),
                                ])
                            ])
                        ),
                    ])
                ),
                ("clients", counted(4, 4)), ("new_clients", counted(2, 0)), ("returning_clients", counted(2, 4)),
                ("x_variant_currency", .string("GBP")),
            ]))
    }

    // MARK: Idempotency

    /// Runs `operation` once per key: the same key and request replays its final answer; another request is refused.
    private mutating func remembering(
        key: String?, fingerprint: String, _ operation: (inout VariantShop) -> Reply
    ) -> Reply {
        guard let key else { return operation(&self) }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            return Self.error(400, "invalid_request", "bad Idempotency-Key", field: "Idempotency-Key")
        }
        if let remembered = keys[key] {
            guard remembered.fingerprint == fingerprint else {
                return Self.error(422, "idempotency_key_reused", "this key was used for another request")
            }
            var reply = remembered.reply
            reply.headers.append(("Idempotent-Replayed", "true"))
            return reply
        }
        let reply = operation(&self)
        if (200..<300).contains(reply.status) || [404, 409, 412, 422].contains(reply.status) {
            keys[key] = Remembered(fingerprint: fingerprint, reply: reply)
        }
        return reply
    }

    // MARK: Helpers

    static func error(_ status: Int, _ code: String, _ message: String, field: String? = nil) -> Reply {
        var detail: Members = [("code", .string(code)), ("message", .string(message))]
        if let field { detail.append(("field", .string(field))) }
        return Reply(status: status, body: .object([("error", .object(detail))]))
    }

    private static func set(_ members: inout Members, _ key: String, _ value: JSONValue) {
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append((key, value))
        }
    }

    /// The body with object keys sorted: two requests are the same whatever their key order.
    static func canonical(_ body: Data) -> String {
        func sorted(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members): .object(members.sorted { $0.key < $1.key }.map { ($0.key, sorted($0.value)) })
            case .array(let values): .array(values.map(sorted))
            default: value
            }
        }
        guard let value = try? JSONParser().parse(body) else { return String(decoding: body, as: UTF8.self) }
        return sorted(value).serialized
    }
}

extension JSONValue {
    fileprivate var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    fileprivate var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }
}
