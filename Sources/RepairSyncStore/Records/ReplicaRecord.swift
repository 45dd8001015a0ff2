public import GRDB
public import RepairSyncModels

/// A server record mirrored in a replica table of the same name, one column per JSON key.
///
/// Columns are the record's `CodingKeys`, in order, plus `synced_at`, which the replica sets when it takes a server
/// copy. Writing goes through one cached `INSERT … ON CONFLICT(id) DO UPDATE` statement per table, which is an
/// order of magnitude faster than GRDB's per-record `upsert()` when applying pages of hundreds of records.
public protocol ReplicaRecord: SyncRecord, FetchableRecord, TableRecord {
    /// The record's column names, in the order of `databaseArguments`.
    static var columnNames: [String] { get }
    /// The record's values in the order of `columnNames`.
    var databaseArguments: StatementArguments { get }
    /// The cached-statement SQL that writes a record (`makeUpsertSQL()`, built once per type: it is the key of the
    /// statement cache, looked up for every record of a page).
    static var upsertSQL: String { get }
}

extension ReplicaRecord {
    public static var databaseTableName: String { collection.name }

    /// `INSERT INTO t (c1, …, synced_at) VALUES (?, …) ON CONFLICT(id) DO UPDATE SET c1 = excluded.c1, …`
    static func makeUpsertSQL() -> String {
        let columns = columnNames + ["synced_at"]
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let updates = columns.filter { $0 != "id" }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return """
            INSERT INTO \(databaseTableName) (\(columns.joined(separator: ", "))) VALUES (\(placeholders)) \
            ON CONFLICT(id) DO UPDATE SET \(updates)
            """
    }

    /// Writes the server copy of this record, replacing any local row with the same id.
    ///
    /// - Parameter syncedAt: when the copy was taken from the server; nil for a row written locally.
    public func upsert(_ db: Database, syncedAt: Timestamp?) throws {
        let statement = try db.cachedStatement(sql: Self.upsertSQL)
        var arguments = databaseArguments
        arguments += [syncedAt]
        try statement.execute(arguments: arguments)
    }
}

extension Database {
    /// Writes server copies of records, in one cached prepared statement.
    public func upsert<Record: ReplicaRecord>(_ records: some Sequence<Record>, syncedAt: Timestamp?) throws {
        let statement = try cachedStatement(sql: Record.upsertSQL)
        for record in records {
            var arguments = record.databaseArguments
            arguments += [syncedAt]
            try statement.execute(arguments: arguments)
        }
    }
}
