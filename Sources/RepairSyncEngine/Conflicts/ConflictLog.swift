internal import Foundation
internal import GRDB
internal import RepairSyncModels

/// The conflicts table: an append-only audit of every resolution, plus the open (manual) conflicts.
enum ConflictLog {
    @discardableResult
    static func record(
        _ db: Database, collection: SyncCollection, id: String, fields: [String], base: FieldValues,
        local: FieldValues, remote: FieldValues, remoteVersion: Int?, policy: String, outcome: ConflictRecord.Outcome,
        now: Timestamp
    ) throws -> Int64 {
        let isOpen = outcome == .awaitingDecision
        try db.execute(
            sql: """
                INSERT INTO conflicts (collection, record_id, fields, base, local, remote, remote_version, policy,
                                       outcome, state, detected_at, resolved_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                collection.name, id, fields.sorted().joined(separator: ","), FieldValuesJSON.encode(base),
                FieldValuesJSON.encode(local), FieldValuesJSON.encode(remote), remoteVersion, policy, outcome.rawValue,
                isOpen ? "open" : "resolved", now.millisecondsSince1970, isOpen ? nil : now.millisecondsSince1970,
            ])
        return db.lastInsertedRowID
    }

    static func list(_ db: Database, openOnly: Bool, limit: Int = 1000) throws -> [ConflictRecord] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM conflicts \(openOnly ? "WHERE state = 'open'" : "") ORDER BY id DESC LIMIT ?
                """, arguments: [limit]
        ).map(conflict)
    }

    static func open(_ db: Database, collection: SyncCollection, id: String) throws -> ConflictRecord? {
        // Every local edit asks, and almost always the answer is none: the id alone first, through a cached
        // statement (compiling `SELECT *` authorizes each column, and a row of every column costs a map of their
        // names), the record only when there is one.
        guard
            let open = try Int64.fetchOne(
                db.cachedStatement(
                    sql:
                        "SELECT id FROM conflicts WHERE state = 'open' AND collection = ? AND record_id = ? ORDER BY id DESC LIMIT 1"
                ),
                arguments: [collection.name, id])
        else { return nil }
        return try conflict(db, id: open)
    }

    static func conflict(_ db: Database, id: Int64) throws -> ConflictRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM conflicts WHERE id = ?"), arguments: [id]).map(conflict)
    }

    static func close(_ db: Database, id: Int64, outcome: ConflictRecord.Outcome, now: Timestamp) throws {
        try db.execute(
            sql: "UPDATE conflicts SET state = 'resolved', outcome = ?, resolved_at = ? WHERE id = ?",
            arguments: [outcome.rawValue, now.millisecondsSince1970, id])
    }

    /// A later local edit of a record whose conflict is open: the decision is shown the latest local values.
    static func updateLocal(_ db: Database, id: Int64, with fields: FieldValues) throws {
        guard let conflict = try conflict(db, id: id) else { return }
        try db.execute(
            sql: "UPDATE conflicts SET local = ? WHERE id = ?",
            arguments: [FieldValuesJSON.encode(conflict.local.overlaid(with: fields)), id])
    }

    static func openCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM conflicts WHERE state = 'open'")) ?? 0
    }

    /// Conflicts by outcome, from the counts the log's triggers keep (`conflict_counts`): a few rows, however long
    /// the log.
    static func countsByOutcome(_ db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT outcome, entries AS n FROM conflict_counts WHERE entries > 0"))
        {
            counts[row["outcome"]] = row["n"]
        }
        return counts
    }

    private static func conflict(_ row: Row) throws -> ConflictRecord {
        ConflictRecord(
            id: row["id"], collection: SyncCollection(rawValue: row["collection"]) ?? .orders,
            recordId: row["record_id"],
            fields: (row["fields"] as String).split(separator: ",").map(String.init),
            base: try FieldValuesJSON.decode(row["base"]), local: try FieldValuesJSON.decode(row["local"]),
            remote: try FieldValuesJSON.decode(row["remote"]), remoteVersion: row["remote_version"],
            policy: row["policy"], outcome: ConflictRecord.Outcome(rawValue: row["outcome"]) ?? .merged,
            isOpen: (row["state"] as String) == "open",
            detectedAt: Timestamp(millisecondsSince1970: row["detected_at"]),
            resolvedAt: (row["resolved_at"] as Int64?).map(Timestamp.init(millisecondsSince1970:)))
    }
}
