internal import Foundation
internal import GRDB
internal import RepairSyncModels
internal import RepairSyncStore

/// The simulator's own reading of a record's base copy (`sync_bases`), written from docs/architecture.md rather than
/// from the engine's code (the two must be able to disagree): the server's last copy of its editable fields, and
/// the values of changes of ours that went in doubt since (they may be on the server).
enum SimBase {
    struct Copy {
        /// Field → text value (nil: null).
        var fields: [String: String?]
        /// Fields with a value of ours that may have been applied, unknown to the base.
        var inDoubt: Set<String>
    }

    static func read(_ store: ReplicaStore, _ collection: SyncCollection, _ id: String) -> Copy? {
        guard
            let texts = try? store.read({ db -> (fields: String, inDoubt: String?)? in
                try Row.fetchOne(
                    db, sql: "SELECT fields, in_doubt FROM sync_bases WHERE collection = ? AND record_id = ?",
                    arguments: [collection.name, id]
                ).map { ($0["fields"], $0["in_doubt"]) }
            }) ?? nil,
            let fields = object(texts.fields)
        else { return nil }
        return Copy(
            fields: fields.mapValues { $0 as? String },
            inDoubt: Set((object(texts.inDoubt) ?? [:]).keys))
    }

    private static func object(_ text: String?) -> [String: Any]? {
        guard let text else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }
}
