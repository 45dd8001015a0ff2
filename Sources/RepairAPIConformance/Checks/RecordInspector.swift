internal import RepairSyncModels
internal import RepairSyncProtocol

/// Holds every record the run receives — in pages, in GET and PATCH answers, in a 412's `current` — to the record
/// clauses: every key with its type (2.4, 3), timestamps (2.2) and money (2.3).
struct RecordInspector {
    let findings: Findings

    static let keysCheck = CheckID(clause: "record-keys")
    static let timestampsCheck = CheckID(clause: "timestamps")
    static let moneyCheck = CheckID(clause: "money")

    /// Inspects one record of `collection`; `origin` says where it came from, for reasons
    /// (`GET /api/v1/orders/changes?limit=100`).
    func inspect(_ record: JSONValue, of collection: SyncCollection, origin: String) {
        guard let members = record.members else {
            findings.problem(
                Self.keysCheck, "\(origin): a \(collection.name) entry is \(record.typeName), not an object")
            return
        }
        let id = record["id"]?.stringValue ?? "?"
        let label = "\(collection.name) \(id)"
        let shape = RecordShape.of(collection)
        let present = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        var missing: [String] = []
        var wrong: [String] = []
        for field in shape.fields {
            guard let value = present[field.key] else {
                missing.append(field.key)
                continue
            }
            if value == .null {
                if !field.nullable { wrong.append("\(field.key) is null") }
                continue
            }
            switch field.kind {
            case .string, .status:
                if value.stringValue == nil { wrong.append("\(field.key) is \(value.typeName), not a string") }
            case .int:
                if value.intValue == nil { wrong.append("\(field.key) is \(value.brief), not an integer") }
            case .bool:
                if value.boolValue == nil { wrong.append("\(field.key) is \(value.typeName), not a boolean") }
            case .money:
                if value.stringValue == nil && value.numberText == nil {
                    wrong.append("\(field.key) is \(value.typeName), not money")
                } else {
                    money(value, "\(label) \(field.key)", origin: origin)
                }
            case .timestamp:
                timestamp(value, "\(label) \(field.key)", origin: origin)
            }
        }
        if let version = present["version"]?.intValue, version < 1 { wrong.append("version is \(version), below 1") }
        if !missing.isEmpty {
            findings.problem(Self.keysCheck, "\(label) (\(origin)) lacks \(missing.joined(separator: ", "))")
        } else if !wrong.isEmpty {
            findings.problem(Self.keysCheck, "\(label) (\(origin)): \(wrong.joined(separator: "; "))")
        } else {
            findings.examined(Self.keysCheck)
        }
    }

    /// A tombstone: `{"id": …, "deleted_at": …}`.
    func inspectTombstone(_ entry: JSONValue, of collection: SyncCollection, origin: String) -> String? {
        guard entry.members != nil else { return "\(origin): a deleted entry is \(entry.typeName), not an object" }
        guard let id = entry["id"]?.stringValue else { return "\(origin): a deleted entry has no string id" }
        guard let deletedAt = entry["deleted_at"] else { return "\(collection.name) tombstone \(id) has no deleted_at" }
        timestamp(deletedAt, "\(collection.name) tombstone \(id) deleted_at", origin: origin)
        return nil
    }

    func timestamp(_ value: JSONValue, _ label: String, origin: String) {
        guard let text = value.stringValue else {
            findings.problem(Self.timestampsCheck, "\(label) is \(value.typeName), not an RFC 3339 string")
            return
        }
        if Timestamp(rfc3339: text) == nil {
            findings.problem(Self.timestampsCheck, "\(label) is \"\(text)\", not RFC 3339 (\(origin))")
        } else {
            findings.examined(Self.timestampsCheck)
        }
    }

    func money(_ value: JSONValue, _ label: String, origin: String) {
        if let problem = MoneyText.problem(value) {
            findings.problem(Self.moneyCheck, "\(label): \(problem)")
        } else {
            findings.examined(Self.moneyCheck)
        }
    }
}
