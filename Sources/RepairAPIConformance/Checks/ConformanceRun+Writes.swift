internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// The checks that write: PATCH (4.4, 2.5), idempotency (5), a ticket message (4.5) and creates (4.7, in
/// `ConformanceRun+Creates`). Each works on one record it
/// picks and announces before writing, changes one free-text field, and puts that field back at the end.
extension ConformanceRun {
    static let patchClauses = [
        "unknown-status", "patch-if-match", "patch-stale", "patch-invalid-field", "edit-in-feed", "idempotent-replay",
        "idempotency-reuse", "patch-invalid-value", "patch-not-object", "patch-malformed-if-match", "patch-not-found",
        "patch-bare-if-match", "idempotency-key-format",
    ]
    static let messageClauses = [
        "message-create", "message-dedupe", "message-in-feed", "message-invalid-value", "message-not-found",
        "message-duplicate",
    ]

    /// The free-text field a PATCH check changes and restores, and a key the contract says cannot be changed.
    static func editable(_ collection: SyncCollection) -> (field: String, fixed: String) {
        collection == .orders ? ("notes", "total") : ("diagnosis", "price")
    }

    func writeChecks(announce: (String) -> Void) async {
        var patchTargets: [(SyncCollection, String)] = []
        for collection in ConformanceCatalog.writable
        where Self.patchClauses.contains(where: { wants($0, collection) }) {
            switch await pick(collection, preferred: collection == .orders ? options.orderID : options.deviceID) {
            case .success(let id):
                patchTargets.append((collection, id))
                let (field, fixed) = Self.editable(collection)
                writes.append(
                    PlannedWrite(
                        collection: collection, id: id,
                        what: "PATCH \(field) (four times, then back to its value); PATCHes the contract refuses "
                            + "(an unknown status, \(fixed), a key that does not exist, a number, a body that is no object, "
                            + "a malformed If-Match, a stale If-Match, a reused Idempotency-Key, keys out of format)"))
            case .failure(let reason):
                for clause in Self.patchClauses {
                    findings.skip(CheckID(clause: clause, collection: collection), reason.description)
                }
            }
        }
        var ticket: String?
        if wants(Self.messageClauses) || wants("idempotent-replay", .ticketMessages) {
            switch await pick(.tickets, preferred: options.ticketID) {
            case .success(let id):
                ticket = id
                writes.append(
                    PlannedWrite(
                        collection: .tickets, id: id,
                        what:
                            "POST one staff-only message (is_internal: true) three times with one id; POSTs the contract "
                            + "refuses (that id with other content, an id that is not a UUID, blank content)"))
            case .failure(let reason):
                for clause in Self.messageClauses { findings.skip(CheckID(clause: clause), reason.description) }
                findings.skip(CheckID(clause: "idempotent-replay", collection: .ticketMessages), reason.description)
            }
        }
        let createPlan = await planCreates()
        guard !writes.isEmpty || createPlan != nil else { return }
        announce("Writes\(options.dryRun ? " this run would make (--dry-run: none is made)" : ""):")
        for write in writes { announce("  \(write.collection.name) \(write.id): \(write.what)") }
        if wants(Self.createRefusalClauses) {
            announce(
                "  POSTs of clients, orders and devices that the contract refuses, under fresh ids: a conforming server creates nothing"
            )
        }
        if options.dryRun {
            for index in writes.indices { writes[index].restoration = "not written (--dry-run)" }
            skipCreates("--dry-run: nothing is written")
            for clause in Self.patchClauses {
                for collection in ConformanceCatalog.writable {
                    findings.skip(CheckID(clause: clause, collection: collection), "--dry-run: nothing is written")
                }
            }
            for clause in Self.messageClauses {
                findings.skip(CheckID(clause: clause), "--dry-run: nothing is written")
            }
            findings.skip(
                CheckID(clause: "idempotent-replay", collection: .ticketMessages), "--dry-run: nothing is written")
            return
        }
        // The creates come first: the PATCHed records, written after them, stay the last of their feeds, so the next
        // run picks the same ones.
        if let createPlan { await createChecks(createPlan.creates, parents: createPlan.parents) }
        for (collection, id) in patchTargets {
            let restoration = await patchScenario(collection, id: id)
            if let index = writes.firstIndex(where: { $0.collection == collection && $0.id == id }) {
                writes[index].restoration = restoration
            }
        }
        if let ticket {
            let outcome = await messageScenario(ticket: ticket)
            if let index = writes.firstIndex(where: { $0.collection == .tickets && $0.id == ticket }) {
                writes[index].restoration = outcome
            }
        }
        for index in writes.indices where writes[index].restoration == nil {
            // The records refused creates named as their parents.
            writes[index].restoration = "named only"
        }
    }

    /// The record to write to: the one named on the command line, else the one the feed delivered last — the
    /// latest changed, which after a run is the one the run wrote to, so that runs keep to the same records.
    private func pick(_ collection: SyncCollection, preferred: String?) async -> Result<String, Unobtainable> {
        if let preferred {
            switch await currentRecord(collection, preferred) {
            case .success: return .success(preferred)
            case .failure(let reason): return .failure(Unobtainable("the record named on the command line: \(reason)"))
            }
        }
        if let read = reads[collection], let id = read.latest {
            return .success(id)
        }
        guard let read = await readToEnd(collection), let id = read.latest else {
            return .failure(
                Unobtainable("no \(collection.name) record to write to: the feed is empty or cannot be read"))
        }
        return .success(id)
    }

    /// 2.5, 4.4 and 5 on one order or device. Returns what became of the field it changed.
    private func patchScenario(_ collection: SyncCollection, id: String) async -> String {
        let (field, fixed) = Self.editable(collection)
        func check(_ clause: String) -> CheckID { CheckID(clause: clause, collection: collection) }
        let tail = await tailCursor(collection)
        guard case .success(let before) = await currentRecord(collection, id), let v0 = before["version"]?.intValue
        else {
            for clause in Self.patchClauses { findings.skip(check(clause), "\(collection.name) \(id) cannot be read") }
            return "not written: the record cannot be read"
        }
        let original = before[field]?.stringValue
        let marker = "repair-api-conformance \(runID): a check edit; the run restores the value before it"
        // The version each step sends as the current one: read again after every step that could have written on a
        // server that wrongly accepts it, so one departure does not make the next steps fail as well.
        var current = v0

        // 2.5: a status no server knows → 422 invalid_value naming status; nothing changes.
        let (unknownStatus, _) = await client.call { [current, key = nextKey()] api throws(APIError) in
            _ = try await api.patch(
                collection, id: id, fields: ["status": "repair_api_conformance_unknown_status"], ifMatch: current,
                key: key)
        }
        if judgeFieldError(unknownStatus, check("unknown-status"), status: 422, code: "invalid_value", field: "status")
        {
            await expectVersion(collection, id, current, check("unknown-status"), after: "the refused PATCH")
            findings.summary(
                check("unknown-status"), "422 invalid_value (field status); the record stayed at version \(current)")
        }
        current = await version(collection, id) ?? current

        // 4.4: a key that cannot be changed → 422 invalid_field naming it. It is sent with the value it has, so a
        // server that wrongly accepts it changes nothing.
        let fixedValue = before[fixed]?.stringValue ?? before[fixed]?.numberText
        let (fixedKey, _) = await client.call { [current, key = nextKey()] api throws(APIError) in
            _ = try await api.patch(collection, id: id, fields: [fixed: fixedValue], ifMatch: current, key: key)
        }
        judgeFieldError(fixedKey, check("patch-invalid-field"), status: 422, code: "invalid_field", field: fixed)

        // 4.4: the other refusals — a key that does not exist, a value of the wrong type, a body that is no object,
        // a malformed If-Match, a record that does not exist.
        await patchRefusals(collection, id: id, field: field, value: before[field] ?? .null)
        // 5: keys out of format.
        await probeKeyFormat(collection, id: id, field: field, value: before[field] ?? .null)
        if !findings.hasProblems(check("patch-invalid-field")) {
            findings.summary(
                check("patch-invalid-field"),
                "422 invalid_field naming \(fixed), and naming \(unknownField) (no such key)")
        }

        // 4.4: the current If-Match → 200, the whole record, version + 1, ETag.
        guard case .success(let base) = await currentRecord(collection, id), let v1 = base["version"]?.intValue else {
            for clause in ["patch-if-match", "idempotent-replay", "idempotency-reuse", "patch-stale", "edit-in-feed"] {
                findings.skip(check(clause), "\(collection.name) \(id) cannot be read")
            }
            return await restore(
                collection, id: id, fields: [field: original, "status": before["status"]?.stringValue])
        }
        let key = nextKey()
        let first = await client.call { api throws(APIError) in
            _ = try await api.patch(collection, id: id, fields: [field: "\(marker) (1)"], ifMatch: v1, key: key)
        }.exchange
        let applied = judgeApplied(first, collection, field: field, value: "\(marker) (1)", before: base)
        if applied {
            findings.summary(
                check("patch-if-match"), "200 with the whole record at version \(v1 + 1) and ETag \"\(v1 + 1)\"")
        }

        // 5: the same request with the same key → the same answer, replayed, and no second write.
        if applied {
            let replay = await client.call { api throws(APIError) in
                _ = try await api.patch(collection, id: id, fields: [field: "\(marker) (1)"], ifMatch: v1, key: key)
            }.exchange
            judgeReplay(first, replay, check("idempotent-replay"))
            await expectVersion(collection, id, v1 + 1, check("idempotent-replay"), after: "the replay")

            // 5: the same key with another body → 422 idempotency_key_reused; nothing changes.
            current = await version(collection, id) ?? v1 + 1
            let reuse = await client.call { [current] api throws(APIError) in
                _ = try await api.patch(
                    collection, id: id, fields: [field: "\(marker) (2)"], ifMatch: current, key: key)
            }.exchange
            if judgeFieldError(
                reuse, check("idempotency-reuse"), status: 422, code: "idempotency_key_reused", field: nil)
            {
                await expectVersion(collection, id, current, check("idempotency-reuse"), after: "the refused reuse")
            }
            // 5: the same key and body on another path (an id no server holds).
            await reuseKeyOnAnotherPath(collection, key: key, fields: [field: "\(marker) (1)"], ifMatch: v1)
            if !findings.hasProblems(check("idempotency-reuse")) {
                findings.summary(
                    check("idempotency-reuse"),
                    "422 idempotency_key_reused for another body, and for the same body on another path; nothing written"
                )
            }
        } else {
            findings.skip(check("idempotent-replay"), "the PATCH to replay did not answer 200")
            findings.skip(check("idempotency-reuse"), "the PATCH whose key to reuse did not answer 200")
        }

        // 4.4: If-Match as a bare integer is accepted.
        if wants("patch-bare-if-match", collection) {
            await patchWithBareIfMatch(collection, id: id, field: field, value: "\(marker) (2)")
        }

        // 4.4: a stale If-Match → 412 version_mismatch with `current`, the record as it is; nothing changes.
        if case .success(let now) = await currentRecord(collection, id), let version = now["version"]?.intValue,
            version > v1
        {
            let (stale, _) = await client.call { [key = nextKey()] api throws(APIError) in
                _ = try await api.patch(collection, id: id, fields: [field: "\(marker) (3)"], ifMatch: v1, key: key)
            }
            judgeConflict(stale, collection, now: now, field: field)
            await expectVersion(collection, id, version, check("patch-stale"), after: "the PATCH with a stale If-Match")
        } else {
            findings.skip(check("patch-stale"), "no newer version to make If-Match \"\(v1)\" stale")
        }

        // 4.4: the edit is at the end of the feed, after the cursor that preceded it.
        if let tail, case .success(let now) = await currentRecord(collection, id),
            let version = now["version"]?.intValue
        {
            await judgeInFeed(collection, id: id, version: version, after: tail, check("edit-in-feed"))
        } else {
            findings.skip(check("edit-in-feed"), "the feed could not be read to its end before the edit")
        }

        return await restore(collection, id: id, fields: [field: original, "status": before["status"]?.stringValue])
    }

    /// 200 with the whole record (as the daemon decodes it), version + 1, the ETag and the new value.
    private func judgeApplied(
        _ exchange: Exchange, _ collection: SyncCollection, field: String, value: String, before: JSONValue
    ) -> Bool {
        let id = CheckID(clause: "patch-if-match", collection: collection)
        let v0 = before["version"]?.intValue ?? 0
        guard exchange.status == 200 else {
            findings.problem(id, "\(exchange.requestLine) with If-Match \"\(v0)\" \(exchange.answer), not 200")
            return false
        }
        if let problem = DaemonDecoding.recordProblem(collection, exchange.body) {
            findings.problem(id, "the daemon cannot decode the answer to \(exchange.requestLine): \(problem)")
            return true
        }
        guard let record = try? JSONText.parse(exchange.body) else { return true }
        inspector.inspect(record, of: collection, origin: exchange.requestLine)
        let version = record["version"]?.intValue ?? 0
        let etag = exchange.header("ETag")
        if version != v0 + 1 {
            findings.problem(id, "\(exchange.requestLine) answered version \(version), not \(v0 + 1)")
        } else if etag != "\"\(version)\"" && etag != "W/\"\(version)\"" {
            findings.problem(id, "\(exchange.requestLine) answered ETag \(etag ?? "none"), not \"\(version)\"")
        } else if record[field]?.stringValue != value {
            findings.problem(
                id, "\(exchange.requestLine) answered \(field) \(record[field]?.brief ?? "absent"), not the value sent")
        } else if let old = before["updated_at"]?.stringValue.flatMap({ Timestamp(rfc3339: $0) }),
            let new = record["updated_at"]?.stringValue.flatMap({ Timestamp(rfc3339: $0) }), new < old
        {
            findings.problem(id, "\(exchange.requestLine): updated_at went back from \(old) to \(new)")
        } else {
            findings.examined(id)
        }
        return true
    }

    /// The replay has the first answer's status and body (as JSON) and says `Idempotent-Replayed: true`.
    func judgeReplay(_ first: Exchange, _ replay: Exchange, _ id: CheckID) {
        guard replay.status == first.status else {
            findings.problem(
                id,
                "\(replay.requestLine) replayed with its Idempotency-Key \(replay.answer), not the original \(first.status ?? 0)"
            )
            return
        }
        guard let original = try? JSONText.parse(first.body), let again = try? JSONText.parse(replay.body),
            JSONText.same(original, again)
        else {
            findings.problem(id, "\(replay.requestLine) replayed with its Idempotency-Key answered another body")
            return
        }
        guard replay.header("Idempotent-Replayed")?.lowercased() == "true" else {
            findings.problem(
                id, "\(replay.requestLine) replayed: the original answer without Idempotent-Replayed: true")
            return
        }
        findings.examined(id)
        findings.summary(
            id, "the original \(first.status ?? 0) and body, Idempotent-Replayed: true, nothing written again")
    }

    /// 412 `version_mismatch` whose `current` is the record as it is now.
    private func judgeConflict(_ exchange: Exchange, _ collection: SyncCollection, now: JSONValue, field: String) {
        let id = CheckID(clause: "patch-stale", collection: collection)
        let version = now["version"]?.intValue ?? 0
        guard exchange.status == 412, exchange.errorCode == "version_mismatch" else {
            findings.problem(
                id, "\(exchange.requestLine) with a stale If-Match \(exchange.answer), not 412 version_mismatch")
            return
        }
        if let problem = DaemonDecoding.conflictProblem(collection, exchange.body) {
            findings.problem(id, "the daemon cannot decode the 412 body: \(problem)")
            return
        }
        guard let current = (try? JSONText.parse(exchange.body))?["current"] else { return }
        inspector.inspect(current, of: collection, origin: "\(exchange.requestLine) (412 current)")
        guard current["version"]?.intValue == version, current[field] == now[field] else {
            findings.problem(
                id,
                "the 412's current is at version \(current["version"]?.brief ?? "?"), but the record is at \(version)")
            return
        }
        findings.examined(id)
        findings.summary(id, "412 version_mismatch with current at version \(version); nothing written")
    }

    /// The record's version now, or nil when it cannot be read.
    func version(_ collection: SyncCollection, _ id: String) async -> Int? {
        guard case .success(let record) = await currentRecord(collection, id) else { return nil }
        return record["version"]?.intValue
    }

    /// The record is still at `version` (nothing was written by what was just sent).
    func expectVersion(_ collection: SyncCollection, _ id: String, _ version: Int, _ check: CheckID, after: String)
        async
    {
        switch await currentRecord(collection, id) {
        case .success(let record):
            let now = record["version"]?.intValue ?? 0
            if now != version {
                findings.problem(
                    check, "\(collection.name) \(id) went from version \(version) to \(now) after \(after)")
            }
        case .failure(let reason):
            findings.problem(check, reason.description)
        }
    }

    /// No record has the id (what was refused made none; `after` names it): a problem when `GET` of it answers anything
    /// but 404. Returns whether it was absent.
    @discardableResult
    func expectAbsent(_ collection: SyncCollection, _ id: String, _ check: CheckID, after: String) async -> Bool {
        let (exchange, _) = await client.call { api throws(APIError) in _ = try await api.record(collection, id: id) }
        guard exchange.status == 404 else {
            findings.problem(check, "\(after) was refused, yet \(exchange.requestLine) \(exchange.answer), not 404")
            return false
        }
        return true
    }

    /// The record appears at `version` in the feed after `cursor`.
    func judgeInFeed(_ collection: SyncCollection, id: String, version: Int, after cursor: String, _ check: CheckID)
        async
    {
        guard let records = await records(after: cursor, in: collection) else {
            findings.problem(
                check, "the \(collection.name) feed after the cursor that preceded the edit could not be read")
            return
        }
        let versions = records.filter { $0["id"]?.stringValue == id }.compactMap { $0["version"]?.intValue }
        if versions.contains(version) {
            findings.examined(check)
            findings.summary(
                check, "\(collection.name) \(id) at version \(version), among \(records.count) entries after the cursor"
            )
        } else {
            findings.problem(
                check,
                "the \(collection.name) feed after the cursor that preceded the edit "
                    + (versions.isEmpty
                        ? "does not hold \(id)"
                        : "holds \(id) only at version \(versions.map { String($0) }.joined(separator: ", "))")
                    + ", which is at version \(version)")
        }
    }

    /// Puts the fields the run may have changed back to their values before it, with the current If-Match. (The
    /// status is among them only because a server that wrongly accepts an unknown status would have changed it.)
    private func restore(_ collection: SyncCollection, id: String, fields original: FieldValues) async -> String {
        guard case .success(let now) = await currentRecord(collection, id), let version = now["version"]?.intValue
        else {
            return "NOT restored: the record cannot be read"
        }
        let changed = original.filter { name, value in now[name]?.stringValue != value }
        let names = original.keys.sorted().joined(separator: " and ")
        if changed.isEmpty { return "\(names) at their values before the run (version \(version))" }
        let (exchange, _) = await client.call { [key = nextKey()] api throws(APIError) in
            _ = try await api.patch(collection, id: id, fields: changed, ifMatch: version, key: key)
        }
        guard exchange.status == 200 else {
            let was = changed.keys.sorted().map { "\($0) was " + (changed[$0]!.map { "\"\($0)\"" } ?? "null") }
            return "NOT restored: \(exchange.requestLine) \(exchange.answer); \(was.joined(separator: ", "))"
        }
        let restored = (try? JSONText.parse(exchange.body))?["version"]?.intValue ?? version + 1
        return
            "\(changed.keys.sorted().joined(separator: " and ")) restored to the value before the run (now version \(restored))"
    }
}
