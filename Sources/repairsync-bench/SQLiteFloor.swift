import Foundation
import GRDB
import RepairSyncStore

/// The physical floors the daemon is compared with: a bare one-row SQLite commit with `synchronous=FULL` in WAL
/// mode (what an acknowledged change must cost at least), and inserting the same rows the daemon synced into an
/// empty replica file in one transaction with prepared statements.
enum SQLiteFloor {
    /// Latencies of `count` one-row commits, each its own FULL transaction, in a WAL file at `path`.
    static func fullCommits(at path: String, count: Int) throws -> Samples {
        let pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
        }
        var samples = Samples()
        for index in 0..<count {
            let start = ContinuousClock.now
            try pool.write { db in
                try db.execute(sql: "INSERT INTO floor (value) VALUES (?)", arguments: ["change \(index)"])
            }
            samples.append((ContinuousClock.now - start).milliseconds)
        }
        try pool.close()
        return samples
    }

    static let tables = ["clients", "orders", "devices", "tickets", "ticket_messages"]

    /// Reads every record row of the replica at `source` (untimed), then inserts them into a new, empty replica at
    /// `destination` (same schema and indexes) in one transaction with one prepared statement per table. Returns the
    /// time of the insert and the rows inserted.
    ///
    /// `listIndexesLast`: the list indexes (`ListIndexes`) dropped before the insert and built after it, in the same
    /// transaction — the daemon's load in bulk, for comparison.
    static func insertRows(from source: String, into destination: String, listIndexesLast: Bool = false) throws
        -> (time: Duration, rows: Int)
    {
        var configuration = Configuration()
        configuration.readonly = true
        let replica = try DatabaseQueue(path: source, configuration: configuration)
        let tables = try replica.read { db in
            try Self.tables.map { table -> (sql: String, rows: [[DatabaseValue]]) in
                let columns = try db.columns(in: table).map(\.name)
                let rows = try Row.fetchAll(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table)")
                    .map { Array($0.databaseValues) }
                let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
                return ("INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", rows)
            }
        }
        try replica.close()
        let store = try ReplicaStore.open(at: destination)
        let start = ContinuousClock.now
        let rows = try store.writer.write { db in
            if listIndexesLast { for index in ListIndexes.all { try db.execute(sql: "DROP INDEX \(index.name)") } }
            var count = 0
            for table in tables {
                let statement = try db.makeStatement(sql: table.sql)
                for row in table.rows {
                    try statement.execute(arguments: StatementArguments(row))
                    count += 1
                }
            }
            if listIndexesLast { for index in ListIndexes.all { try db.execute(sql: index.sql) } }
            return count
        }
        let time = ContinuousClock.now - start
        try store.close()
        return (time, rows)
    }
}
