internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// 4.7: records created with a client-chosen id. The refusals (a body that is not an object, a collection that is
/// not created this way, a key the server sets, a value the contract refuses, a parent that does not exist) create
/// nothing on a conforming server and always run; the creates themselves — one client, one order for it, one device
/// on that order, which stay because the API deletes nothing — run only with `--creates`.
extension ConformanceRun {
    static let createRefusalClauses = [
        "create-not-object", "create-not-creatable", "create-invalid-field", "create-invalid-value",
        "create-parent-not-found",
    ]
    static let createClauses = [
        "create-new", "create-replay", "create-duplicate", "create-parent-write", "create-in-feed",
    ]
    static let creatable: [SyncCollection] = [.clients, .orders, .devices]

    /// The three records `--creates` makes, with fresh ids, named before anything is written.
    struct PlannedCreates {
        let client = UUID().uuidString.lowercased()
        let order = UUID().uuidString.lowercased()
        let device = UUID().uuidString.lowercased()
    }

    /// Every check of these clauses, on every collection it is checked on.
    func checks(of clauses: [String]) -> [CheckID] {
        clauses.flatMap { ConformanceCatalog.clause($0)?.checkIDs ?? [] }
    }

    /// Plans what the create checks will write and announces it (`writes`); nil when none of them is selected.
    func planCreates() async -> (creates: PlannedCreates?, parents: (client: String?, order: String?))? {
        let wantsRefusals = wants(Self.createRefusalClauses)
        let wantsCreates = wants(Self.createClauses)
        guard wantsRefusals || wantsCreates else { return nil }
        var creates: PlannedCreates?
        if wantsCreates {
            if options.creates {
                let planned = PlannedCreates()
                creates = planned
                let stays = "it stays: the API deletes no record"
                writes.append(
                    PlannedWrite(
                        collection: .clients, id: planned.client,
                        what:
                            "POST (create) a client marked with the run (\(email)), sent four times with this id; \(stays)"
                    ))
                writes.append(
                    PlannedWrite(
                        collection: .orders, id: planned.order,
                        what:
                            "POST (create) an order for that client (its order_count goes to 1), sent four times; \(stays)"
                    ))
                writes.append(
                    PlannedWrite(
                        collection: .devices, id: planned.device,
                        what:
                            "POST (create) a device on that order (its device_count and total move), sent four times; \(stays)"
                    ))
            } else {
                for id in checks(of: Self.createClauses) where selected(id) {
                    findings.skip(
                        id,
                        "not asked for: --creates makes one client, one order and one device, which stay (the API deletes no record)"
                    )
                }
            }
        }
        guard wantsRefusals else { return (creates, (nil, nil)) }
        // The refusals that need a parent to be refused for their own reason name the run's new records, or else
        // records of the feeds — which a server that wrongly accepts such a create would write to.
        var parents: (client: String?, order: String?) = (creates?.client, creates?.order)
        if parents.client == nil, case .success(let id) = await pickLatest(.clients) {
            parents.client = id
            writes.append(
                PlannedWrite(
                    collection: .clients, id: id,
                    what:
                        "named as the client of orders POSTed with values the contract refuses (nothing is created on a conforming server)"
                ))
        }
        if parents.order == nil, case .success(let id) = await pickLatest(.orders) {
            parents.order = id
            writes.append(
                PlannedWrite(
                    collection: .orders, id: id,
                    what:
                        "named as the order of devices POSTed with values the contract refuses (nothing is created on a conforming server)"
                ))
        }
        return (creates, parents)
    }

    var email: String { "repair-api-conformance+\(runID)@example.invalid" }

    /// Skips every selected create check: `--dry-run`.
    func skipCreates(_ reason: String) {
        for id in checks(of: Self.createRefusalClauses + Self.createClauses) where selected(id) {
            findings.skip(id, reason)
        }
    }

    private func pickLatest(_ collection: SyncCollection) async -> Result<String, Unobtainable> {
        if let read = reads[collection], let id = read.latest { return .success(id) }
        guard let read = await readToEnd(collection), let id = read.latest else {
            return .failure(
                Unobtainable("no \(collection.name) record to name as a parent: the feed is empty or cannot be read"))
        }
        reads[collection] = read
        return .success(id)
    }

    func createChecks(_ creates: PlannedCreates?, parents: (client: String?, order: String?)) async {
        if let creates { await createScenario(creates) }
        await createRefusals(parents: parents)
    }

    // MARK: The creates

    /// One client, an order for it, a device on that order: each created, replayed (with its key, then without),
    /// sent again with another body, its parent's figures and the feeds checked.
    private func createScenario(_ planned: PlannedCreates) async {
        var tails: [SyncCollection: String] = [:]
        for collection in Self.creatable {
            if let tail = await tailCursor(collection) { tails[collection] = tail }
        }
        let newClient: [(String, JSONValue)] = [
            ("email", .string(email)), ("first_name", .string("Conformance")), ("last_name", .string("Check \(runID)")),
            ("notes", .string("repair-api-conformance \(runID): a check record; safe to ignore.")),
        ]
        guard await createOne(.clients, planned.client, newClient, other: ("notes", .string("another body"))) else {
            skipAfterFailedCreate([.orders, .devices], "the client they belong to was not created")
            return
        }
        let newOrder: [(String, JSONValue)] = [
            ("client_id", .string(planned.client)), ("status", .string("booked_in")), ("deposit", .string("20")),
            ("notes", .string("repair-api-conformance \(runID): a check order; safe to ignore.")),
        ]
        let clientBefore = await recordValue(.clients, planned.client)
        guard
            await createOne(
                .orders, planned.order, newOrder, other: ("deposit", .string("21")), parent: (.clients, planned.client))
        else {
            skipAfterFailedCreate([.devices], "the order it belongs to was not created")
            return
        }
        await judgeParentWrite(
            .orders, parent: .clients, planned.client, before: clientBefore,
            expected: [("order_count", .number("1"))])
        let newDevice: [(String, JSONValue)] = [
            ("order_id", .string(planned.order)), ("type", .string("phone")), ("brand", .string("Conformance")),
            ("model", .string("Check \(runID)")), ("issue", .string("repair-api-conformance check device")),
            ("price", .string("30")),
        ]
        let orderBefore = await recordValue(.orders, planned.order)
        guard
            await createOne(
                .devices, planned.device, newDevice, other: ("price", .string("31")), parent: (.orders, planned.order))
        else { return }
        await judgeParentWrite(
            .devices, parent: .orders, planned.order, before: orderBefore,
            expected: [("device_count", .number("1")), ("total", .string("30")), ("balance", .string("10"))])

        // 4.7 with 4.2: each new record is in its feed after the cursor that preceded the creates, as it is now.
        for (collection, id) in [
            (SyncCollection.clients, planned.client), (.orders, planned.order), (.devices, planned.device),
        ] {
            let check = CheckID(clause: "create-in-feed", collection: collection)
            guard selected(check) else { continue }
            guard let tail = tails[collection] else {
                findings.skip(check, "the \(collection.name) feed could not be read to its end before the creates")
                continue
            }
            guard let version = await version(collection, id) else {
                findings.problem(check, "\(collection.name) \(id) cannot be read after its create")
                continue
            }
            await judgeInFeed(collection, id: id, version: version, after: tail, check)
        }
    }

    private func skipAfterFailedCreate(_ collections: [SyncCollection], _ reason: String) {
        for clause in Self.createClauses {
            for collection in collections { findings.skip(CheckID(clause: clause, collection: collection), reason) }
        }
    }

    /// Creates one record and holds it to 4.7: 201, then the replays and the duplicate. Returns whether it was created.
    private func createOne(
        _ collection: SyncCollection, _ id: String, _ fields: [(String, JSONValue)], other: (String, JSONValue),
        parent: (SyncCollection, String)? = nil
    ) async -> Bool {
        func check(_ clause: String) -> CheckID { CheckID(clause: clause, collection: collection) }
        let body = Self.body([("id", JSONValue.string(id))] + fields)
        let key = nextKey()
        let first = await client.call { api throws(APIError) in
            _ = try await api.create(collection, body: body, key: key)
        }
        .exchange
        guard first.status == 201, let created = try? JSONText.parse(first.body), created.members != nil else {
            findings.problem(check("create-new"), "\(first.requestLine) \(first.answer), not 201 with the record")
            noteCreate(collection, id, "NOT created: \(first.requestLine) \(first.answer)")
            for clause in ["create-replay", "create-duplicate", "create-parent-write", "create-in-feed"] {
                findings.skip(check(clause), "the create did not answer 201")
            }
            return false
        }
        judgeCreated(first, created, collection, id: id, fields: fields)
        noteCreate(collection, id, "created; it stays (the API deletes no record)")

        // 5 and 4.7: the same key → the original 201, replayed; the same id and body under another key → 200 with
        // the record. Neither writes: the record (and its parent) keep their versions.
        let replayCheck = check("create-replay")
        var parentVersion: Int?
        if let parent { parentVersion = await version(parent.0, parent.1) }
        let replay = await client.call { api throws(APIError) in
            _ = try await api.create(collection, body: body, key: key)
        }
        .exchange
        var replayProblems = false
        if replay.status != 201 || replay.header("Idempotent-Replayed")?.lowercased() != "true" {
            findings.problem(
                replayCheck,
                "\(replay.requestLine) replayed with its Idempotency-Key \(replay.answer)"
                    + (replay.status == 201 ? " without Idempotent-Replayed: true" : ", not the original 201"))
            replayProblems = true
        }
        let again = await client.call { [key = nextKey()] api throws(APIError) in
            _ = try await api.create(collection, body: body, key: key)
        }.exchange
        let againRecord = try? JSONText.parse(again.body)
        if again.status != 200 || againRecord?["id"]?.stringValue != id {
            findings.problem(
                replayCheck,
                "\(again.requestLine) with the same id and body under another key \(again.answer), not 200 with the record"
            )
            replayProblems = true
        } else if let againRecord {
            inspector.inspect(againRecord, of: collection, origin: again.requestLine)
        }
        if let now = await version(collection, id), now != 1 {
            findings.problem(
                replayCheck, "\(collection.name) \(id) is at version \(now) after the creates sent again, not 1")
            replayProblems = true
        }
        if let parent, let parentVersion, let now = await version(parent.0, parent.1), now != parentVersion {
            findings.problem(
                replayCheck,
                "\(parent.0.name) \(parent.1) went from version \(parentVersion) to \(now) when its child's create was sent again"
            )
            replayProblems = true
        }
        if !replayProblems {
            findings.examined(replayCheck)
            findings.summary(
                replayCheck,
                "the key replayed the original 201; the same id and body again answered 200; nothing written twice")
        }

        // 4.7: the same id with another body → 409 duplicate_id; nothing changes.
        let duplicateCheck = check("create-duplicate")
        let otherBody = Self.body([("id", JSONValue.string(id))] + fields.map { $0.0 == other.0 ? other : $0 })
        let duplicate = await client.call { [key = nextKey()] api throws(APIError) in
            _ = try await api.create(collection, body: otherBody, key: key)
        }.exchange
        if judgeFieldError(duplicate, duplicateCheck, status: 409, code: "duplicate_id", field: nil) {
            await expectVersion(collection, id, 1, duplicateCheck, after: "the create with another body")
            if !findings.hasProblems(duplicateCheck) {
                findings.summary(
                    duplicateCheck, "409 duplicate_id for the same id with another \(other.0); nothing changed")
            }
        }
        return true
    }

    /// 201, `ETag: "1"`, version 1, the id and the values sent, and the server's own fields as 4.7 sets them.
    private func judgeCreated(
        _ exchange: Exchange, _ record: JSONValue, _ collection: SyncCollection, id: String,
        fields: [(String, JSONValue)]
    ) {
        let check = CheckID(clause: "create-new", collection: collection)
        inspector.inspect(record, of: collection, origin: exchange.requestLine)
        if let problem = DaemonDecoding.recordProblem(collection, exchange.body) {
            findings.problem(check, "the daemon cannot decode the answer to \(exchange.requestLine): \(problem)")
            return
        }
        var wrong: [String] = []
        if record["id"]?.stringValue != id { wrong.append("id \(record["id"]?.brief ?? "absent"), not the id sent") }
        if record["version"]?.intValue != 1 { wrong.append("version \(record["version"]?.brief ?? "absent"), not 1") }
        let etag = exchange.header("ETag")
        if etag != "\"1\"" && etag != "W/\"1\"" { wrong.append("ETag \(etag ?? "none"), not \"1\"") }
        let money = Set(NewRecordShape.of(collection)?.money ?? [])
        for (key, sent) in fields where !Self.same(record[key], sent, money: money.contains(key)) {
            wrong.append("\(key) \(record[key]?.brief ?? "absent"), not \(sent.brief) as sent")
        }
        let expected: [(String, JSONValue?)] =
            switch collection {
            case .clients: [("order_count", .number("0")), ("total_spent", .string("0"))]
            // No device yet: none counted, no total, so no balance.
            case .orders:
                [
                    ("device_count", .number("0")), ("total", .null), ("balance", .null),
                    ("client_email", .string(email)),
                ]
            default: []
            }
        for (key, value) in expected
        where !Self.same(record[key], value, money: ["total_spent", "total", "balance"].contains(key)) {
            wrong.append(
                "\(key) \(record[key]?.brief ?? "absent"), not \(value?.brief ?? "absent") (the server's to set)")
        }
        if wrong.isEmpty {
            findings.examined(check)
            let number = record["order_number"].map { ", order_number \($0.brief)" } ?? ""
            findings.summary(
                check, "201 with \(collection.name) \(id) at version 1, ETag \"1\", the values sent\(number)")
        } else {
            findings.problem(
                check, "\(exchange.requestLine) answered 201 with " + wrong.prefix(3).joined(separator: "; "))
        }
    }

    private func noteCreate(_ collection: SyncCollection, _ id: String, _ outcome: String) {
        if let index = writes.firstIndex(where: { $0.collection == collection && $0.id == id }) {
            writes[index].restoration = outcome
        }
    }

    /// 4.7: the create wrote its parent once — `version` + 1 and its figures as expected.
    private func judgeParentWrite(
        _ collection: SyncCollection, parent: SyncCollection, _ parentID: String, before: JSONValue?,
        expected: [(String, JSONValue)]
    ) async {
        let check = CheckID(clause: "create-parent-write", collection: collection)
        guard selected(check) else { return }
        guard let before, let v0 = before["version"]?.intValue, let after = await recordValue(parent, parentID) else {
            findings.skip(check, "\(parent.name) \(parentID) could not be read")
            return
        }
        var wrong: [String] = []
        let version = after["version"]?.intValue ?? 0
        if version != v0 + 1 { wrong.append("version \(version), not \(v0 + 1)") }
        for (key, value) in expected where !Self.same(after[key], value, money: ["total", "balance"].contains(key)) {
            wrong.append("\(key) \(after[key]?.brief ?? "absent"), not \(value.brief)")
        }
        if wrong.isEmpty {
            findings.examined(check)
            findings.summary(
                check,
                "\(parent.name) \(parentID) went to version \(v0 + 1) with "
                    + expected.map { "\($0.0) \($0.1.brief)" }.joined(separator: ", "))
        } else {
            findings.problem(
                check,
                "after the \(collection.name) create, \(parent.name) \(parentID) has " + wrong.joined(separator: "; "))
        }
    }

    private func recordValue(_ collection: SyncCollection, _ id: String) async -> JSONValue? {
        guard case .success(let record) = await currentRecord(collection, id) else { return nil }
        return record
    }

    // MARK: The refusals

    /// Creates the contract refuses: each answers its error, naming the field, and creates nothing.
    private func createRefusals(parents: (client: String?, order: String?)) async {
        let notObject = CheckID(clause: "create-not-object")
        if selected(notObject) {
            let (exchange, _) = await client.call { [key = nextKey()] api throws(APIError) in
                _ = try await api.create(.clients, body: Data(#"["repair-api-conformance"]"#.utf8), key: key)
            }
            if judgeFieldError(exchange, notObject, status: 400, code: "invalid_request", field: nil) {
                findings.summary(notObject, "400 invalid_request for a body that is a JSON array")
            }
        }
        let notCreatable = CheckID(clause: "create-not-creatable")
        if selected(notCreatable) {
            for collection in [SyncCollection.tickets, .ticketMessages] {
                let id = UUID().uuidString.lowercased()
                let (exchange, _) = await client.call { [key = nextKey()] api throws(APIError) in
                    _ = try await api.request(
                        "POST", "/api/v1/\(collection.name)",
                        json: Self.body([("id", .string(id)), ("subject", .string("repair-api-conformance"))]),
                        headers: [("Idempotency-Key", key)])
                }
                if judgeFieldError(exchange, notCreatable, status: 405, code: "invalid_request", field: nil) {
                    if await expectAbsent(collection, id, notCreatable, after: exchange.requestLine) {
                        findings.examined(notCreatable)
                    }
                }
            }
            findings.summary(notCreatable, "405 invalid_request for POST /tickets and /ticket_messages")
        }

        let fresh = { UUID().uuidString.lowercased() }
        let clientFields: [(String, JSONValue)] = [("email", .string(email))]
        func order(_ parent: String) -> [(String, JSONValue)] { [("client_id", .string(parent))] }
        func device(_ parent: String) -> [(String, JSONValue)] {
            [("order_id", .string(parent)), ("type", .string("phone"))]
        }

        // A key the server sets.
        await refuse(
            .clients, "create-invalid-field", id: fresh(), clientFields + [("total_spent", .string("0"))],
            status: 422, code: "invalid_field", field: "total_spent")
        await refuse(
            .orders, "create-invalid-field", id: fresh(),
            parents.client.map { order($0) + [("order_number", .number("1"))] },
            status: 422, code: "invalid_field", field: "order_number")
        await refuse(
            .devices, "create-invalid-field", id: fresh(),
            parents.order.map { device($0) + [("version", .number("1"))] },
            status: 422, code: "invalid_field", field: "version")
        // A value the contract refuses: an id that is not a UUID, negative money.
        await refuse(
            .clients, "create-invalid-value", id: "repair-api-conformance-\(runID)-not-a-uuid", clientFields,
            status: 422, code: "invalid_value", field: "id")
        await refuse(
            .orders, "create-invalid-value", id: fresh(),
            parents.client.map { order($0) + [("deposit", .string("-5"))] },
            status: 422, code: "invalid_value", field: "deposit")
        await refuse(
            .devices, "create-invalid-value", id: fresh(),
            parents.order.map { device($0) + [("price", .string("-5"))] },
            status: 422, code: "invalid_value", field: "price")
        // A parent that does not exist (a fresh UUID no server can hold).
        await refuse(
            .orders, "create-parent-not-found", id: fresh(), order(fresh()),
            status: 422, code: "parent_not_found", field: "client_id")
        await refuse(
            .devices, "create-parent-not-found", id: fresh(), device(fresh()),
            status: 422, code: "parent_not_found", field: "order_id")
    }

    /// One create the contract refuses: the error it names, and no record under the id afterwards.
    private func refuse(
        _ collection: SyncCollection, _ clause: String, id: String, _ fields: [(String, JSONValue)]?, status: Int,
        code: String, field: String
    ) async {
        let check = CheckID(clause: clause, collection: collection)
        guard selected(check) else { return }
        guard let fields else {
            findings.skip(
                check,
                "no \(collection == .orders ? "client" : "order") to name as the parent: its feed is empty or cannot be read"
            )
            return
        }
        let body = Self.body([("id", JSONValue.string(id))] + fields)
        let (exchange, _) = await client.call { [key = nextKey()] api throws(APIError) in
            _ = try await api.create(collection, body: body, key: key)
        }
        if judgeFieldError(exchange, check, status: status, code: code, field: field) {
            if await expectAbsent(collection, id, check, after: exchange.requestLine) { findings.examined(check) }
        }
        if !findings.hasProblems(check) {
            findings.summary(check, "\(status) \(code) naming \(field); nothing created")
        }
    }

    // MARK: Helpers

    static func body(_ members: [(String, JSONValue)]) -> Data {
        Data(JSONValue.object(members.map { (key: $0.0, value: $0.1) }).serialized.utf8)
    }

    /// The value as the contract compares it: money as an exact amount (`"30"`, `30.00`), the rest as JSON.
    static func same(_ value: JSONValue?, _ expected: JSONValue?, money: Bool) -> Bool {
        guard let value, let expected else { return value == nil && expected == nil }
        if money, value != .null, expected != .null {
            func amount(_ value: JSONValue) -> Money? {
                if case .string(let text) = value { return Money(exactly: text) }
                if case .number(let text) = value { return Money(exactly: text) }
                return nil
            }
            guard let left = amount(value), let right = amount(expected) else { return false }
            return left == right
        }
        return JSONText.same(value, expected)
    }
}
