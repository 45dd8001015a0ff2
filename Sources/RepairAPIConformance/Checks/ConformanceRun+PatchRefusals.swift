internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncProtocol

/// The PATCHes 4.4 and 5 refuse, on the order or device the run writes to. Each sends the field it edits with the
/// value it has now (or goes to a record that does not exist), so that even a server that wrongly accepts one
/// changes no value; each then checks that the record stayed at its version.
extension ConformanceRun {
    /// A key no record has, in the shape of the run's names.
    var unknownField: String { "repair_api_conformance_no_such_field" }

    /// An id no server holds.
    var unknownRecordID: String { "repair-api-conformance-\(runID)-no-such-record" }

    /// 4.4 on `id`, whose `field` holds `value`.
    func patchRefusals(_ collection: SyncCollection, id: String, field: String, value: JSONValue) async {
        func check(_ clause: String) -> CheckID { CheckID(clause: clause, collection: collection) }
        let unchanged = Self.body([(field, value)])
        func refused(
            _ check: CheckID, body: Data, ifMatch: String? = nil, status: Int, code: String, field expected: String?,
            what: String
        ) async {
            await refusedPatch(
                collection, id: id, check, body: body, ifMatch: ifMatch, status: status, code: code,
                field: expected, what: what)
        }

        // 4.4: a key that does not exist → 422 invalid_field naming it (the key that cannot be changed is sent by
        // the scenario itself).
        if wants("patch-invalid-field", collection) {
            await refused(
                check("patch-invalid-field"), body: Self.body([(unknownField, .string("x"))]), status: 422,
                code: "invalid_field", field: unknownField, what: "a key that does not exist")
        }
        // 4.4: a value of the wrong type → 422 invalid_value naming the field.
        if wants("patch-invalid-value", collection) {
            await refused(
                check("patch-invalid-value"), body: Self.body([(field, .number("5"))]), status: 422,
                code: "invalid_value", field: field, what: "\(field) as a number")
            if !findings.hasProblems(check("patch-invalid-value")) {
                findings.summary(
                    check("patch-invalid-value"), "422 invalid_value (field \(field)) for a number; nothing written")
            }
        }
        // 4.4: a body that is not a JSON object, or is {} → 400 invalid_request.
        if wants("patch-not-object", collection) {
            for (body, what) in [(Data(#"["repair-api-conformance"]"#.utf8), "a JSON array"), (Data("{}".utf8), "{}")] {
                await refused(
                    check("patch-not-object"), body: body, status: 400, code: "invalid_request", field: nil, what: what)
            }
            if !findings.hasProblems(check("patch-not-object")) {
                findings.summary(
                    check("patch-not-object"), "400 invalid_request for a JSON array and for {}; nothing written")
            }
        }
        // 4.4: If-Match that is not a version → 400 naming If-Match.
        if wants("patch-malformed-if-match", collection) {
            await refused(
                check("patch-malformed-if-match"), body: unchanged, ifMatch: "\"repair-api-conformance\"", status: 400,
                code: "invalid_request", field: "If-Match", what: "If-Match: \"repair-api-conformance\"")
            if !findings.hasProblems(check("patch-malformed-if-match")) {
                findings.summary(
                    check("patch-malformed-if-match"),
                    "400 invalid_request (field If-Match) for an If-Match that is no version; nothing written")
            }
        }
        // 4.4: a record that does not exist → 404 not_found, and still none afterwards.
        if wants("patch-not-found", collection) {
            let missing = check("patch-not-found")
            let (exchange, _) = await client.call { [key = nextKey()] api throws(APIError) in
                _ = try await api.patch(
                    collection, id: unknownRecordID, fields: [field: "repair-api-conformance"], ifMatch: nil, key: key)
            }
            if judgeFieldError(exchange, missing, status: 404, code: "not_found", field: nil) {
                await expectAbsent(collection, unknownRecordID, missing, after: exchange.requestLine)
            }
            if !findings.hasProblems(missing) {
                findings.summary(missing, "404 not_found for a PATCH of \(collection.name) \(unknownRecordID)")
            }
        }
    }

    /// One PATCH the contract refuses, sent with the record's current version (read again first, so that a step a
    /// server wrongly accepted does not make the next one fail as well): the error it names, and the record still at
    /// that version afterwards. `what` names what was sent (the request line alone shows no header or body).
    func refusedPatch(
        _ collection: SyncCollection, id: String, _ check: CheckID, body: Data, ifMatch: String? = nil,
        key: String? = nil, status: Int, code: String, field expected: String?, what: String
    ) async {
        guard let current = await version(collection, id) else {
            findings.problem(check, "\(collection.name) \(id) cannot be read before the PATCH (\(what))")
            return
        }
        let path = "/api/v1/\(collection.name)/\(APIClient.escape(id))"
        let headers = [(name: "Idempotency-Key", value: key ?? nextKey()), ("If-Match", ifMatch ?? "\"\(current)\"")]
        let (exchange, _) = await client.call { api throws(APIError) in
            _ = try await api.request("PATCH", path, json: body, headers: headers)
        }
        let labelled = exchange.labelled(what)
        if judgeFieldError(labelled, check, status: status, code: code, field: expected) {
            await expectVersion(collection, id, current, check, after: "the refused PATCH (\(what))")
        }
    }

    /// 4.4: `If-Match` as a bare integer (`If-Match: 7`) is accepted: 200, version + 1. Returns whether it applied.
    @discardableResult
    func patchWithBareIfMatch(_ collection: SyncCollection, id: String, field: String, value: String) async -> Bool {
        let check = CheckID(clause: "patch-bare-if-match", collection: collection)
        guard let current = await version(collection, id) else {
            findings.skip(check, "\(collection.name) \(id) cannot be read")
            return false
        }
        let (exchange, _) = await client.call { [key = nextKey()] api throws(APIError) in
            _ = try await api.request(
                "PATCH", "/api/v1/\(collection.name)/\(APIClient.escape(id))",
                json: Self.body([(field, .string(value))]),
                headers: [("Idempotency-Key", key), ("If-Match", String(current))])
        }
        guard exchange.status == 200, let record = try? JSONText.parse(exchange.body) else {
            findings.problem(
                check, "\(exchange.requestLine) with If-Match: \(current) (a bare integer) \(exchange.answer), not 200")
            return false
        }
        inspector.inspect(record, of: collection, origin: exchange.requestLine)
        if record["version"]?.intValue != current + 1 {
            findings.problem(
                check,
                "\(exchange.requestLine) with If-Match: \(current) answered version \(record["version"]?.brief ?? "absent"), not \(current + 1)"
            )
        } else {
            findings.examined(check)
            findings.summary(check, "If-Match: \(current) (a bare integer) answered 200 at version \(current + 1)")
        }
        return true
    }
}
