internal import Foundation
internal import GRDB
internal import RepairSyncModels

/// The last server copy of a record's editable fields and its version (the *base*): local edits are diffed
/// against it, PATCHes send its version as If-Match, and the three-way merge compares both sides with it.
struct BaseCopy: Sendable, Hashable {
    var version: Int
    var fields: FieldValues
    /// Per field, the values of changes that went while in doubt since this base was written — discarded, or
    /// replaced by a later edit of their fields: they may have been applied, so a remote value equal to one of them is
    /// this workstation's own write, not another user's edit.
    var goneInDoubt: [String: [String?]] = [:]
}

enum BaseCopies {
    static func load(_ db: Database, collection: SyncCollection, id: String) throws -> BaseCopy? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT version, fields, in_doubt FROM sync_bases WHERE collection = ? AND record_id = ?"),
                arguments: [collection.name, id])
        else { return nil }
        return try copy(version: row[0], fields: row[1], inDoubt: row[2])
    }

    /// A base from its stored columns (`version`, `fields`, `in_doubt`).
    static func copy(version: Int, fields: String, inDoubt: String?) throws -> BaseCopy {
        BaseCopy(version: version, fields: try FieldValuesJSON.decode(fields), goneInDoubt: try decodeInDoubt(inDoubt))
    }

    /// Writes the base. A copy of another version replaces the evidence of changes gone in doubt (the server's copy
    /// now says what happened); the same version again keeps it.
    static func save(_ db: Database, collection: SyncCollection, id: String, _ base: BaseCopy) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO sync_bases (collection, record_id, version, fields) VALUES (?, ?, ?, ?)
                ON CONFLICT(collection, record_id) DO UPDATE SET version = excluded.version, fields = excluded.fields,
                    in_doubt = CASE WHEN excluded.version = sync_bases.version THEN sync_bases.in_doubt END
                """)
        try statement.execute(arguments: [collection.name, id, base.version, FieldValuesJSON.encode(base.fields)])
    }

    static func save<R: EditableRecord>(_ db: Database, _ record: R) throws {
        try save(
            db, collection: R.collection, id: record.id,
            BaseCopy(version: record.version, fields: record.editableValues))
    }

    /// An update entry that was sent (in doubt) goes, or is sent again under a new key, before its answer is known —
    /// discarded, or its fields replaced by a later edit: the values its request carried are kept with the base as
    /// evidence of a write that may have been applied, until the server's next copy of another version. Nothing
    /// for an entry never sent.
    static func rememberGoneInDoubt(_ db: Database, _ entry: OutboxEntry) throws {
        guard entry.kind == .update, entry.sent, !entry.fields.isEmpty,
            var base = try load(db, collection: entry.collection, id: entry.recordId)
        else { return }
        for (field, value) in entry.fields where !(base.goneInDoubt[field] ?? []).contains(value) {
            base.goneInDoubt[field, default: []].append(value)
        }
        try db.execute(
            sql: "UPDATE sync_bases SET in_doubt = ? WHERE collection = ? AND record_id = ?",
            arguments: [FieldValuesJSON.encodeInDoubt(base.goneInDoubt), entry.collection.name, entry.recordId])
    }

    private static func decodeInDoubt(_ text: String?) throws -> [String: [String?]] {
        guard let text else { return [:] }
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: [Any]] else {
            throw EngineError.corruptOutbox("sync_bases.in_doubt is not a JSON object of arrays: \(text.prefix(200))")
        }
        return object.mapValues { values in values.map { $0 as? String } }
    }
}
