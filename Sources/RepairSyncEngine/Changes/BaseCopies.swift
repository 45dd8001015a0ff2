internal import GRDB
internal import RepairSyncModels

/// The last server copy of a record's editable fields and its version (the *base*): local edits are diffed
/// against it, PATCHes send its version as If-Match, and the three-way merge compares both sides with it.
struct BaseCopy: Sendable, Hashable {
    var version: Int
    var fields: FieldValues
}

enum BaseCopies {
    static func load(_ db: Database, collection: SyncCollection, id: String) throws -> BaseCopy? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT version, fields FROM sync_bases WHERE collection = ? AND record_id = ?"),
                arguments: [collection.name, id])
        else { return nil }
        return BaseCopy(version: row["version"], fields: try FieldValuesJSON.decode(row["fields"]))
    }

    static func save(_ db: Database, collection: SyncCollection, id: String, _ base: BaseCopy) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO sync_bases (collection, record_id, version, fields) VALUES (?, ?, ?, ?)
                ON CONFLICT(collection, record_id) DO UPDATE SET version = excluded.version, fields = excluded.fields
                """)
        try statement.execute(arguments: [collection.name, id, base.version, FieldValuesJSON.encode(base.fields)])
    }

    static func save<R: EditableRecord>(_ db: Database, _ record: R) throws {
        try save(db, collection: R.collection, id: record.id, BaseCopy(version: record.version, fields: record.editableValues))
    }
}
