internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncProtocol

/// Section 5's refusals of a key: one out of format, and one used for another request. Each is sent where it cannot
/// write — the PATCH carries the field's own value, or goes to a record that does not exist — and the record's version
/// shows that nothing was written.
extension ConformanceRun {
    /// 5: a key that is not 1–255 printable ASCII characters → 400 naming `Idempotency-Key`, nothing written.
    func probeKeyFormat(_ collection: SyncCollection, id: String, field: String, value: JSONValue) async {
        let check = CheckID(clause: "idempotency-key-format", collection: collection)
        guard selected(check) else { return }
        let keys = [
            (String(repeating: "k", count: 256), "an Idempotency-Key of 256 characters"),
            ("repair-api-conformance\t\(runID)", "an Idempotency-Key with a tab"),
            ("repair-api-conformance-clé-\(runID)", "an Idempotency-Key with a letter outside ASCII"),
        ]
        for (key, what) in keys {
            await refusedPatch(
                collection, id: id, check, body: Self.body([(field, value)]), key: key, status: 400,
                code: "invalid_request", field: "Idempotency-Key", what: what)
        }
        if !findings.hasProblems(check) {
            findings.summary(
                check,
                "400 invalid_request (field Idempotency-Key) for keys of 256 characters, with a tab, with an é; nothing written"
            )
        }
    }

    /// 5: the key of an applied PATCH, with the same body, on another path (a record that does not exist) → 422
    /// `idempotency_key_reused`: neither a replay of the first answer nor a 404.
    func reuseKeyOnAnotherPath(_ collection: SyncCollection, key: String, fields: FieldValues, ifMatch: Int) async {
        let check = CheckID(clause: "idempotency-reuse", collection: collection)
        let (exchange, _) = await client.call { [unknownRecordID] api throws(APIError) in
            _ = try await api.patch(collection, id: unknownRecordID, fields: fields, ifMatch: ifMatch, key: key)
        }
        judgeFieldError(
            exchange.labelled("the key and body of an applied PATCH of another record"), check, status: 422,
            code: "idempotency_key_reused", field: nil)
    }
}
