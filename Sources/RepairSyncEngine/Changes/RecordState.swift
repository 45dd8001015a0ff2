internal import GRDB
internal import RepairSyncModels
internal import RepairSyncStore

/// What queueing another program's edit of a record needs to know about it, read with one statement on the writer:
/// its editable values as stored, whether it ever came from the server, its base copy, whether it has outbox entries
/// and whether an open conflict holds it.
///
/// Each was a statement of its own (the record, its entries' probe, its base copy, the conflict probe), and every
/// statement run through GRDB pays its bindings, its cursor and a row of its own: on the writer's queue, which every
/// change from every client waits behind, the four were a third of its samples (a quarter as one: docs/performance.md).
struct RecordState {
    /// The record's `editableFields` as the row holds them.
    var stored: FieldValues
    /// No server copy was ever applied to the row (`synced_at` is null): another program inserted it, or it was
    /// created here.
    var neverSynced: Bool
    var base: BaseCopy?
    var hasEntries: Bool
    var hasOpenConflict: Bool

    /// Nil when there is no such record.
    static func read<R: EditableRecord>(_ type: R.Type, id: String, _ db: Database) throws -> RecordState? {
        let fields = R.editableFields
        let sql = R.collection == .devices ? Self.deviceSQL : R.collection == .orders ? Self.orderSQL : sql(R.self)
        guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [id]) else { return nil }
        // By position, in the order `sql` selects them.
        var stored: FieldValues = [:]
        for (index, field) in fields.enumerated() { stored[field] = .some(row[index] as String?) }
        let at = fields.count
        let version: Int? = row[at + 1]
        let base = try version.map { version in
            try BaseCopies.copy(version: version, fields: row[at + 2], inDoubt: row[at + 3])
        }
        return RecordState(
            stored: stored, neverSynced: row[at], base: base, hasEntries: row[at + 4], hasOpenConflict: row[at + 5])
    }

    private static let orderSQL = sql(Order.self)
    private static let deviceSQL = sql(Device.self)

    /// The statement for one collection. The collection's name is written into it (a constant of the code, never
    /// input), so that SQLite plans each look-up on its index — the same ones the separate statements used.
    static func sql<R: EditableRecord>(_ type: R.Type) -> String {
        let name = R.collection.name
        return """
            SELECT \(R.editableFields.map { "r.\($0)" }.joined(separator: ", ")), r.synced_at IS NULL,
                b.version, b.fields, b.in_doubt,
                EXISTS (SELECT 1 FROM outbox x WHERE x.collection = '\(name)' AND x.record_id = r.id),
                EXISTS (SELECT 1 FROM conflicts c WHERE c.state = 'open' AND c.collection = '\(name)'
                    AND c.record_id = r.id)
            FROM \(R.databaseTableName) r
                LEFT JOIN sync_bases b ON b.collection = '\(name)' AND b.record_id = r.id
            WHERE r.id = ?
            """
    }
}
