internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels

/// A server that implements docs/api.md from its own code — its own storage, feeds, idempotency and validation,
/// sharing nothing with `repair-api-dev` — so that the two can disagree and the engine is tested against the
/// contract rather than against one implementation of it. It runs in the simulator's process, answers one request
/// at a time when the simulator delivers it, and counts what an invariant needs: applications per idempotency key,
/// keys reused with another body, messages created per id, and every value each field has held.
struct SimServer {
    struct Stored {
        var body: SimJSON
        var seq: Int
        /// Earlier states, oldest first (for history rewinds).
        var history: [SimJSON] = []
    }

    struct Remembered {
        var fingerprint: String
        var response: TransportResponse
    }

    static let token = "sim-token"
    static let editable: [SyncCollection: [String]] = [
        .orders: ["status", "notes"], .devices: ["status", "diagnosis", "resolution"],
    ]
    static let orderStatuses = ["booked_in", "in_progress", "awaiting_parts", "ready", "collected", "cancelled"]
    static let deviceStatuses = [
        "booked_in", "diagnosing", "awaiting_approval", "approved", "in_repair", "awaiting_parts", "repaired",
        "quality_check", "ready", "collected", "unrepairable",
    ]

    var records: [SyncCollection: [String: Stored]] = [:]
    var tombstones: [SyncCollection: [String: (deletedAt: String, seq: Int)]] = [:]
    var seq = 0
    var epoch = 1
    var remembered: [String: Remembered] = [:]
    /// Writes applied per idempotency key (a replay is not an application).
    var applications: [String: Int] = [:]
    /// Requests that reused a key with another method, path or body (the client's fault: must stay 0).
    var keyReuses = 0
    /// Create POSTs refused as `duplicate_id` (the client's fault: must stay 0) — except for a record or message a
    /// restore brought back that the server did not have just before it (`resurrected`): the client saw it gone (a
    /// refused create, a 404, a resync without it) and nothing it saw since could tell it that its id is taken again.
    var duplicateIds = 0
    /// Records ("collection|id") a restore brought back that the server did not have just before it.
    var resurrected: Set<String> = []
    /// Every value each field was given, by anyone, with the step ("collection|id|field" → [(step, JSON text)]).
    var written: [String: [(step: Int, value: String)]] = [:]
    /// Pages served per collection (for stale pages), the latest last.
    var served: [SyncCollection: [Data]] = [:]
    var requests = 0
    /// The server's clock minus the simulator's wall clock.
    var skewMilliseconds: Int64 = 0
    /// The simulator's step, for `written`.
    var step = 0
    /// Every (collection|id) the server ever stored.
    var everStored: Set<String> = []
    /// Records put back to an older state without moving in the feed ("collection|id"), until written again.
    var unannounced: Set<String> = []
    /// What each record created through the API was created with ("collection|id" → canonical body).
    var creations: [String: String] = [:]
    /// Records created per id ("collection|id"): a second creation of an id would be a duplicate.
    var createdIds: [String: Int] = [:]
    /// Creates whose parent the server never had (a child sent before its parent: the client's fault, must stay 0).
    var orphanCreates = 0
    /// False while a PATCH is delivered `notApplied`: answered 200 at a new version, its values not written.
    var appliesPatchValues = true

    // MARK: Seeding

    init(orders: Int, random: inout SplitMix64, now: Timestamp) {
        let stamp = now.rfc3339
        var clientIds: [String] = []
        for n in 1...max(2, orders / 2 + 1) {
            let id = "cli_\(n)"
            clientIds.append(id)
            insert(.clients, Self.client(id: id, n: n, stamp: stamp))
        }
        var deviceNumber = 0
        for n in 1...orders {
            let id = "ord_\(n)"
            let client = clientIds[Int(random.next() % UInt64(clientIds.count))]
            insert(.orders, Self.order(id: id, n: n, client: client, stamp: stamp))
            for _ in 0..<(1 + Int(random.next() % 2)) {
                deviceNumber += 1
                insert(.devices, Self.device(id: "dev_\(deviceNumber)", order: id, stamp: stamp))
            }
        }
        for n in 1...max(2, orders / 2) {
            let id = "tkt_\(n)"
            insert(.tickets, Self.ticket(id: id, n: n, client: clientIds[n % clientIds.count], stamp: stamp))
            for m in 1...(1 + Int(random.next() % 2)) {
                insert(
                    .ticketMessages, Self.message(id: "msg_\(n)_\(m)", ticket: id, content: "hello \(m)", stamp: stamp))
            }
        }
    }

    static func order(id: String, n: Int, client: String, stamp: String) -> SimJSON {
        .object([
            "id": .string(id), "order_number": .int(1000 + n), "status": .string("booked_in"),
            "total": .string("149.99"),
            "deposit": .string("50"), "balance": .string("99.99"), "notes": .null, "client_id": .string(client),
            "client_name": .string("Client \(client)"), "client_email": .string("\(client)@example.com"),
            "client_phone": .null, "location_id": .string("loc_1"), "location_name": .string("High Street"),
            "assigned_user_id": .null, "assigned_user_name": .null, "device_count": .int(1),
            "created_at": .string(stamp), "updated_at": .string(stamp), "version": .int(1),
        ])
    }

    static func device(id: String, order: String, stamp: String) -> SimJSON {
        .object([
            "id": .string(id), "order_id": .string(order), "type": .string("phone"), "brand": .string("Apple"),
            "model": .string("iPhone 13"), "serial": .null, "imei": .null, "passcode": .null,
            "status": .string("booked_in"), "issue": .string("Cracked screen"), "diagnosis": .null, "resolution": .null,
            "price": .string("89.5"), "assigned_user_id": .null, "created_at": .string(stamp),
            "updated_at": .string(stamp), "version": .int(1),
        ])
    }

    static func client(id: String, n: Int, stamp: String) -> SimJSON {
        .object([
            "id": .string(id), "email": .string("\(id)@example.com"), "first_name": .string("First\(n)"),
            "last_name": .string("Last\(n)"), "phone": .null, "company": .null, "address": .null, "city": .null,
            "postcode": .null, "notes": .null, "order_count": .int(1), "total_spent": .string("0"),
            "created_at": .string(stamp), "updated_at": .string(stamp), "version": .int(1),
        ])
    }

    static func ticket(id: String, n: Int, client: String, stamp: String) -> SimJSON {
        .object([
            "id": .string(id), "ticket_number": .int(n), "subject": .string("Subject \(n)"), "status": .string("open"),
            "priority": .null, "client_id": .string(client), "client_email": .string("\(client)@example.com"),
            "client_name": .null, "assigned_user_id": .null, "assigned_user_name": .null, "order_id": .null,
            "order_ref": .null, "message_count": .int(0), "last_message_at": .null, "created_at": .string(stamp),
            "updated_at": .string(stamp), "version": .int(1),
        ])
    }

    static func message(id: String, ticket: String, content: String, stamp: String, isInternal: Bool = false) -> SimJSON
    {
        .object([
            "id": .string(id), "ticket_id": .string(ticket), "content": .string(content),
            "sender_type": .string("staff"), "sender_name": .string("Sim User"), "sender_id": .string("usr_sim"),
            "is_internal": .bool(isInternal), "created_at": .string(stamp), "updated_at": .string(stamp),
            "version": .int(1),
        ])
    }

    // MARK: Backups

    struct Backup {
        var records: [SyncCollection: [String: Stored]]
        var tombstones: [SyncCollection: [String: (deletedAt: String, seq: Int)]]
        var seq: Int
        var remembered: [String: Remembered]
        var creations: [String: String]
    }

    /// Backups taken as the simulation goes, the latest last.
    var backups: [Backup] = []

    mutating func takeBackup() {
        backups.append(
            Backup(records: records, tombstones: tombstones, seq: seq, remembered: remembered, creations: creations))
        if backups.count > 6 { backups.removeFirst() }
    }

    /// The whole server goes back to a backup — records, feeds and the idempotency keys it remembered — as a
    /// restore would. Cursors issued since cannot be honoured: the feed's epoch moves on (every cursor answers 410).
    mutating func restore(_ backup: Backup) {
        for (collection, stored) in backup.records {
            for id in stored.keys where records[collection]?[id] == nil {
                resurrected.insert("\(collection.name)|\(id)")
            }
        }
        records = backup.records
        tombstones = backup.tombstones
        seq = backup.seq
        remembered = backup.remembered
        epoch += 1
        unannounced = []
        for (collection, stored) in records {
            for (id, record) in stored {
                guard case .object(let members) = record.body else { continue }
                for (field, value) in members {
                    written["\(collection.name)|\(id)|\(field)", default: []].append((step, value.text))
                }
            }
        }
        // A key the restored server forgot may be applied again: that is a first application on this history.
        for key in applications.keys where remembered[key] == nil { applications[key] = nil }
        // So may a create whose record the restored server does not have.
        creations = backup.creations
        for key in createdIds.keys where creations[key] == nil { createdIds[key] = nil }
    }

    // MARK: Storage

    mutating func nextSeq() -> Int {
        seq += 1
        return seq
    }

    /// Stores a record at the end of its feed, removing any tombstone of its id.
    mutating func insert(_ collection: SyncCollection, _ body: SimJSON, keepPlace: Bool = false) {
        guard let id = body["id"]?.string else { return }
        var stored = records[collection]?[id] ?? Stored(body: body, seq: 0)
        if records[collection]?[id] != nil { stored.history.append(stored.body) }
        stored.body = body
        if !keepPlace || stored.seq == 0 {
            stored.seq = nextSeq()
            unannounced.remove("\(collection.name)|\(id)")
        } else {
            unannounced.insert("\(collection.name)|\(id)")
        }
        records[collection, default: [:]][id] = stored
        everStored.insert("\(collection.name)|\(id)")
        tombstones[collection]?[id] = nil
        if case .object(let members) = body {
            for (field, value) in members {
                written["\(collection.name)|\(id)|\(field)", default: []].append((step, value.text))
            }
        }
    }

    func record(_ collection: SyncCollection, _ id: String) -> SimJSON? { records[collection]?[id]?.body }

    func ids(_ collection: SyncCollection) -> [String] { (records[collection] ?? [:]).keys.sorted() }

    /// True when the server has held `value` in the field at any time from `step` on: it held it then, or was given
    /// it later.
    func held(_ collection: SyncCollection, _ id: String, _ field: String, _ value: String?, since step: Int) -> Bool {
        let json: SimJSON = value.map { .string($0) } ?? .null
        if record(collection, id)?[field] == json { return true }
        let history = written["\(collection.name)|\(id)|\(field)"] ?? []
        if history.last(where: { $0.step <= step })?.value == json.text { return true }
        return history.contains { $0.step >= step && $0.value == json.text }
    }

    var serverNow: Timestamp { Timestamp(millisecondsSince1970: nowMilliseconds + skewMilliseconds) }
    var nowMilliseconds: Int64 = 0

    /// A server-side write of any kind: version + 1, `updated_at` now, end of the feed.
    mutating func write(_ collection: SyncCollection, _ id: String, _ change: (inout SimJSON) -> Void) -> SimJSON? {
        guard var body = record(collection, id) else { return nil }
        change(&body)
        body["version"] = .int((body["version"]?.int ?? 0) + 1)
        body["updated_at"] = .string(serverNow.rfc3339)
        insert(collection, body)
        return body
    }

    /// Deletes a record and its children, each leaving a tombstone.
    mutating func delete(_ collection: SyncCollection, _ id: String) {
        guard records[collection]?[id] != nil else { return }
        records[collection]?[id] = nil
        tombstones[collection, default: [:]][id] = (serverNow.rfc3339, nextSeq())
        let children: [(SyncCollection, String)] =
            switch collection {
            case .orders:
                ids(.devices).filter { record(.devices, $0)?["order_id"]?.string == id }.map { (.devices, $0) }
            case .tickets:
                ids(.ticketMessages).filter { record(.ticketMessages, $0)?["ticket_id"]?.string == id }
                    .map { (.ticketMessages, $0) }
            default: []
            }
        for (child, childId) in children { delete(child, childId) }
    }

    // MARK: Requests

    /// Answers one request as docs/api.md says.
    mutating func handle(_ request: TransportRequest) -> TransportResponse {
        requests += 1
        let (path, query) = Self.split(request.path)
        let parts = path.split(separator: "/").map(String.init)
        guard parts.count >= 3, parts[0] == "api", parts[1] == "v1" else {
            return error(404, "not_found", "no such path")
        }
        if parts.count == 3, parts[2] == "health", request.method == "GET" {
            return json(200, .object(["status": .string("ok"), "time": .string(serverNow.rfc3339)]))
        }
        guard request.header("Authorization") == "Bearer \(Self.token)" else {
            var response = error(401, "unauthorized", "a valid bearer token is required")
            response.headers.append(("WWW-Authenticate", "Bearer"))
            return response
        }
        guard let collection = SyncCollection(rawValue: parts[2]) else {
            return error(404, "not_found", "no such collection")
        }
        switch (request.method, parts.count) {
        case ("GET", 4) where parts[3] == "changes":
            return changes(collection, query: query)
        case ("GET", 4):
            guard let body = record(collection, parts[3]) else { return error(404, "not_found", "no such record") }
            return json(200, body)
        case ("PATCH", 4) where Self.editable[collection] != nil:
            return idempotent(request) { server in server.patch(collection, parts[3], request) }
        case ("POST", 5) where collection == .tickets && parts[4] == "messages":
            return idempotent(request) { server in server.postMessage(ticket: parts[3], request) }
        case ("POST", 3) where Self.createFields[collection] != nil:
            return idempotent(request) { server in server.create(collection, request) }
        default:
            return error(404, "not_found", "no such endpoint")
        }
    }

    static func split(_ path: String) -> (String, [String: String]) {
        guard let mark = path.firstIndex(of: "?") else { return (path, [:]) }
        var query: [String: String] = [:]
        for pair in path[path.index(after: mark)...].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            query[kv[0]] = kv.count > 1 ? (kv[1].removingPercentEncoding ?? kv[1]) : ""
        }
        return (String(path[..<mark]), query)
    }

    func json(_ status: Int, _ body: SimJSON, etag: Int? = nil) -> TransportResponse {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json; charset=utf-8"), ("Date", serverNow.httpDate),
        ]
        if let etag { headers.append(("ETag", "\"\(etag)\"")) }
        return TransportResponse(status: status, headers: headers, body: body.data)
    }

    func error(_ status: Int, _ code: String, _ message: String, field: String? = nil) -> TransportResponse {
        var detail: [String: SimJSON] = ["code": .string(code), "message": .string(message)]
        if let field { detail["field"] = .string(field) }
        return json(status, .object(["error": .object(detail)]))
    }

    // MARK: Feeds

    func cursor(after position: Int, nonce: UInt64? = nil) -> String {
        "c\(epoch).\(position)" + (nonce.map { ".\($0)" } ?? "")
    }

    /// The position a cursor names, or nil when it is unknown, from another epoch or beyond the feed.
    func position(_ cursor: String) -> Int? {
        let parts = cursor.dropFirst().split(separator: ".")
        guard cursor.hasPrefix("c"), parts.count >= 2, Int(parts[0]) == epoch, let position = Int(parts[1]),
            position >= 0, position <= seq
        else { return nil }
        return position
    }

    /// The real page after `cursor` (as the contract says), and the position it ends at.
    func page(_ collection: SyncCollection, after: Int, limit: Int) -> (body: SimJSON, hasMore: Bool, last: Int) {
        var entries: [(seq: Int, data: SimJSON?, deleted: SimJSON?)] = []
        for stored in (records[collection] ?? [:]).values where stored.seq > after {
            entries.append((stored.seq, stored.body, nil))
        }
        for (id, tombstone) in tombstones[collection] ?? [:] where tombstone.seq > after {
            entries.append(
                (tombstone.seq, nil, .object(["id": .string(id), "deleted_at": .string(tombstone.deletedAt)])))
        }
        entries.sort { $0.seq < $1.seq }
        let page = entries.prefix(limit)
        let last = page.last?.seq ?? after
        let body = SimJSON.object([
            "data": .array(page.compactMap(\.data)), "deleted": .array(page.compactMap(\.deleted)),
            "next_cursor": .string(cursor(after: last)), "has_more": .bool(entries.count > limit),
        ])
        return (body, entries.count > limit, last)
    }

    mutating func changes(_ collection: SyncCollection, query: [String: String]) -> TransportResponse {
        let limit = query["limit"].flatMap(Int.init) ?? 500
        guard (1...1000).contains(limit) else { return error(400, "invalid_request", "bad limit", field: "limit") }
        var after = 0
        if let text = query["cursor"] {
            guard let position = position(text) else {
                return error(410, "cursor_expired", "the cursor is unknown or has expired")
            }
            after = position
        }
        let body = page(collection, after: after, limit: limit).body
        served[collection, default: []].append(body.data)
        if served[collection]!.count > 8 { served[collection]!.removeFirst() }
        return json(200, body)
    }

    // MARK: Writes

    /// Replays a final outcome for a repeated key (or refuses the key with another request); otherwise runs `body`
    /// and remembers its outcome when it is final (docs/api.md section 5).
    mutating func idempotent(_ request: TransportRequest, _ body: (inout SimServer) -> TransportResponse)
        -> TransportResponse
    {
        guard let key = request.header("Idempotency-Key") else { return body(&self) }
        let fingerprint = "\(request.method) \(Self.split(request.path).0) \(Self.canonical(request.body ?? Data()))"
        if let earlier = remembered[key] {
            guard earlier.fingerprint == fingerprint else {
                keyReuses += 1
                return error(422, "idempotency_key_reused", "the key was used for another request")
            }
            var replay = earlier.response
            replay.headers.removeAll { $0.name == "Date" }
            replay.headers += [("Date", serverNow.httpDate), ("Idempotent-Replayed", "true")]
            return replay
        }
        let before = seq
        let response = body(&self)
        if seq != before { applications[key, default: 0] += 1 }
        if (200..<300).contains(response.status) || [404, 409, 412, 422].contains(response.status) {
            remembered[key] = Remembered(fingerprint: fingerprint, response: response)
        }
        return response
    }

    /// A write refused for good (`422 invalid_value`), not applied; remembered for its key as any final outcome.
    mutating func refuse(_ request: TransportRequest) -> TransportResponse {
        idempotent(request) { server in server.error(422, "invalid_value", "refused by the simulation", field: "notes")
        }
    }

    /// A JSON body compared as JSON: key order and whitespace do not matter.
    static func canonical(_ body: Data) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return String(decoding: body, as: UTF8.self) }
        return String(decoding: data, as: UTF8.self)
    }

    mutating func patch(_ collection: SyncCollection, _ id: String, _ request: TransportRequest) -> TransportResponse {
        guard let current = record(collection, id) else { return error(404, "not_found", "no such record") }
        guard let data = request.body, let fields = try? JSONDecoder().decode([String: String?].self, from: data) else {
            return error(422, "invalid_value", "every field must be a string or null")
        }
        guard !fields.isEmpty else { return error(400, "invalid_request", "nothing to change") }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            guard Self.editable[collection]!.contains(name) else {
                return error(422, "invalid_field", "\(name) cannot be changed", field: name)
            }
            if name == "status" {
                let known = collection == .orders ? Self.orderStatuses : Self.deviceStatuses
                guard let value, known.contains(value) else {
                    return error(422, "invalid_value", "unknown status", field: "status")
                }
            }
        }
        if let header = request.header("If-Match") {
            guard let expected = Int(header.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) else {
                return error(400, "invalid_request", "malformed If-Match", field: "If-Match")
            }
            let version = current["version"]?.int ?? 0
            if expected != version {
                // The client is told the record as it is: a silent rewind is silent no more.
                unannounced.remove("\(collection.name)|\(id)")
                return json(
                    412,
                    .object([
                        "error": .object([
                            "code": .string("version_mismatch"),
                            "message": .string("If-Match \(expected) ≠ \(version)"),
                        ]),
                        "current": current,
                    ]))
            }
        }
        let applying = appliesPatchValues
        let updated = write(collection, id) { body in
            for (name, value) in fields where applying { body[name] = value.map { .string($0) } ?? .null }
        }!
        return json(200, updated, etag: updated["version"]?.int)
    }

    // MARK: Creates (docs/api.md section 4.7)

    /// The keys a create body may carry besides `id`, and those it requires (this server's own reading).
    static let createFields: [SyncCollection: (all: [String], required: [String])] = [
        .clients: (
            ["email", "first_name", "last_name", "phone", "company", "address", "city", "postcode", "notes"], ["email"]
        ),
        .orders: (["client_id", "status", "notes", "deposit", "location_id", "assigned_user_id"], ["client_id"]),
        .devices: (
            [
                "order_id", "type", "brand", "model", "serial", "imei", "passcode", "status", "issue", "diagnosis",
                "resolution", "price", "assigned_user_id",
            ], ["order_id", "type"]
        ),
    ]

    mutating func create(_ collection: SyncCollection, _ request: TransportRequest) -> TransportResponse {
        guard let data = request.body, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            return error(400, "invalid_request", "the body must be a JSON object")
        }
        let (allowed, required) = Self.createFields[collection]!
        var values: [String: String] = [:]
        for (name, value) in object.sorted(by: { $0.key < $1.key }) where name != "id" {
            guard allowed.contains(name) else {
                return error(422, "invalid_field", "\(name) cannot be set", field: name)
            }
            if value is NSNull { continue }
            guard let text = value as? String else { return error(422, "invalid_value", "not a string", field: name) }
            values[name] = text
        }
        guard let id = object["id"] as? String, Self.isUUID(id) else {
            return error(422, "invalid_value", "id must be a UUID", field: "id")
        }
        for name in required where (values[name] ?? "").allSatisfy(\.isWhitespace) {
            return error(422, "invalid_value", "\(name) is required", field: name)
        }
        if let email = values["email"], !email.contains("@") {
            return error(422, "invalid_value", "not an email", field: "email")
        }
        if let status = values["status"] {
            guard (collection == .orders ? Self.orderStatuses : Self.deviceStatuses).contains(status) else {
                return error(422, "invalid_value", "unknown status", field: "status")
            }
        }
        for name in ["deposit", "price"] {
            if let amount = values[name] {
                guard let money = Money(exactly: amount), money >= .zero else {
                    return error(422, "invalid_value", "not an amount", field: name)
                }
                values[name] = money.canonicalText
            }
        }
        let key = "\(collection.name)|\(id)"
        let canonical = Self.canonical(data)
        if let existing = record(collection, id) {
            guard creations[key] == canonical else {
                if !resurrected.contains(key) { duplicateIds += 1 }
                return error(409, "duplicate_id", "the id belongs to another record", field: "id")
            }
            return json(200, existing)
        }
        if tombstones[collection]?[id] != nil { return error(409, "duplicate_id", "the id was deleted", field: "id") }
        let parent: (field: String, collection: SyncCollection)? =
            switch collection {
            case .orders: ("client_id", .clients)
            case .devices: ("order_id", .orders)
            default: nil
            }
        if let parent, let parentId = values[parent.field], record(parent.collection, parentId) == nil {
            if !everStored.contains("\(parent.collection.name)|\(parentId)") { orphanCreates += 1 }
            return error(422, "parent_not_found", "no such \(parent.collection.name)", field: parent.field)
        }
        let stamp = serverNow.rfc3339
        var body: SimJSON
        switch collection {
        case .clients:
            body = Self.client(id: id, n: 0, stamp: stamp)
            for name in allowed { body[name] = values[name].map { .string($0) } ?? .null }
            body["order_count"] = .int(0)
        case .orders:
            let clientId = values["client_id"]!
            let client = record(.clients, clientId)!
            body = Self.order(id: id, n: 0, client: clientId, stamp: stamp)
            let number = (records[.orders] ?? [:]).values.compactMap { $0.body["order_number"]?.int }.max() ?? 1000
            let names = [client["first_name"]?.string, client["last_name"]?.string].compactMap { $0 }
            body["order_number"] = .int(number + 1)
            body["status"] = .string(values["status"] ?? "booked_in")
            body["notes"] = values["notes"].map { .string($0) } ?? .null
            body["deposit"] = values["deposit"].map { .string($0) } ?? .null
            body["total"] = .null
            body["balance"] = .null
            body["client_name"] = names.isEmpty ? .null : .string(names.joined(separator: " "))
            body["client_email"] = client["email"] ?? .null
            body["client_phone"] = client["phone"] ?? .null
            body["location_id"] = values["location_id"].map { .string($0) } ?? .null
            body["location_name"] = .null
            body["assigned_user_id"] = values["assigned_user_id"].map { .string($0) } ?? .null
            body["assigned_user_name"] = .null
            body["device_count"] = .int(0)
            _ = write(.clients, clientId) { $0["order_count"] = .int(($0["order_count"]?.int ?? 0) + 1) }
        default:
            let orderId = values["order_id"]!
            body = Self.device(id: id, order: orderId, stamp: stamp)
            for name in allowed { body[name] = values[name].map { .string($0) } ?? .null }
            body["status"] = .string(values["status"] ?? "booked_in")
        }
        insert(collection, body)
        if collection == .devices, let orderId = values["order_id"] {
            let prices = ids(.devices).compactMap { record(.devices, $0) }.filter { $0["order_id"]?.string == orderId }
                .map { $0["price"]?.string }
            let priced = prices.compactMap { $0.flatMap { Money(exactly: $0) } }
            _ = write(.orders, orderId) { order in
                let total = priced.isEmpty ? nil : priced.reduce(Money.zero, +)
                let deposit = order["deposit"]?.string.flatMap { Money(exactly: $0) } ?? .zero
                order["device_count"] = .int(prices.count)
                order["total"] = total.map { .string($0.canonicalText) } ?? .null
                order["balance"] = total.map { .string(($0 - deposit).canonicalText) } ?? .null
            }
        }
        creations[key] = canonical
        createdIds[key, default: 0] += 1
        return json(201, body, etag: 1)
    }

    static func isUUID(_ id: String) -> Bool {
        let groups = id.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    struct NewMessage: Decodable {
        var id: String
        var content: String
        // swift-format-ignore: AlwaysUseLowerCamelCase
        // The wire's name.
        var is_internal: Bool?
    }

    mutating func postMessage(ticket: String, _ request: TransportRequest) -> TransportResponse {
        guard record(.tickets, ticket) != nil else { return error(404, "not_found", "no such ticket") }
        guard let data = request.body, let message = try? JSONDecoder().decode(NewMessage.self, from: data) else {
            return error(422, "invalid_value", "id, content and is_internal", field: "content")
        }
        let groups = message.id.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12], groups.allSatisfy({ $0.allSatisfy(\.isHexDigit) }) else {
            return error(422, "invalid_value", "id must be a UUID", field: "id")
        }
        guard !message.content.allSatisfy(\.isWhitespace) else {
            return error(422, "invalid_value", "content is blank", field: "content")
        }
        if let existing = record(.ticketMessages, message.id) {
            guard existing["ticket_id"]?.string == ticket, existing["content"]?.string == message.content else {
                // A message a restore brought back (seed 50330: the client saw it gone — a 404 — and took a new
                // message under its id before the restore) is not the client's fault, as for records.
                if !resurrected.contains("\(SyncCollection.ticketMessages.name)|\(message.id)") { duplicateIds += 1 }
                return error(409, "duplicate_id", "the id belongs to another message")
            }
            return json(200, existing)
        }
        let body = Self.message(
            id: message.id, ticket: ticket, content: message.content, stamp: serverNow.rfc3339,
            isInternal: message.is_internal ?? false)
        insert(.ticketMessages, body)
        let now = serverNow.rfc3339
        _ = write(.tickets, ticket) { ticket in
            ticket["message_count"] = .int((ticket["message_count"]?.int ?? 0) + 1)
            ticket["last_message_at"] = .string(now)
        }
        return json(201, body)
    }
}
