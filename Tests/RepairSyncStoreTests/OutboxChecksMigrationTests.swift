import GRDB
import RepairSyncTestSupport
import Testing

@testable import RepairSyncStore

/// `v11-outbox-checks-without-lists`: the outbox rebuilt with its `IN` lists written as comparisons — every entry,
/// count, change number, index and trigger kept; the same values refused; no temporary index per row.
@Suite struct OutboxChecksMigrationTests {
    static let insertEntry = """
        INSERT INTO outbox (collection, record_id, order_key, kind, fields, idempotency_key, state, created_at, edited_at)
        VALUES (?, ?, ?, 'update', '{"notes":"n"}', ?, ?, 1, 1)
        """

    /// What the migration must keep: every row as it was, the counts, the generation, the dependents' SQL.
    struct Snapshot: Equatable {
        let rows: [Row]
        let counts: [Row]
        let generation: Int?
        let dependents: [Row]

        init(_ db: Database) throws {
            rows = try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY seq")
            counts = try Row.fetchAll(db, sql: "SELECT * FROM outbox_counts ORDER BY state")
            generation = try Int.fetchOne(db, sql: "SELECT value FROM status_generation")
            dependents = try Row.fetchAll(
                db,
                sql:
                    "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'outbox' AND type != 'table' ORDER BY name"
            )
        }
    }

    @Test("a v10 store's outbox keeps its entries, counts, change numbers, indexes and triggers")
    func keepsEverything() throws {
        let dir = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.path("replica.sqlite"))
        try ReplicaMigrations.migrator.migrate(queue, upTo: "v10-push-priority-by-join")
        let before = try queue.write { db in
            for (n, state) in ["pending", "in_flight", "failed", "dead", "held", "pending"].enumerated() {
                try db.execute(
                    sql: Self.insertEntry, arguments: ["orders", "ord_\(n)", "orders:ord_\(n)", "k\(n)", state])
            }
            try db.execute(sql: "UPDATE outbox SET depends_on = 'clients:c', blocked_by = 'clients:c' WHERE seq = 2")
            // The highest change number used so far goes: the next must still follow it.
            try db.execute(sql: "DELETE FROM outbox WHERE seq = 6")
            return try Snapshot(db)
        }
        #expect(before.rows.count == 5)
        #expect(!before.dependents.isEmpty)

        try ReplicaMigrations.migrator.migrate(queue)
        try queue.write { db in
            #expect(try Snapshot(db) == before)
            #expect(try String.fetchAll(db, sql: "PRAGMA integrity_check") == ["ok"])
            #expect(
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'outbox'")?
                    .contains("IN ('clients'") == false)
            try db.execute(sql: Self.insertEntry, arguments: ["devices", "dev_1", "orders:ord_1", "k-new", "pending"])
            #expect(db.lastInsertedRowID == 7, "change numbers are never used twice")
            // The triggers came back with the table: the new entry is counted and the generation raised.
            #expect(try Int.fetchOne(db, sql: "SELECT entries FROM outbox_counts WHERE state = 'pending'") == 2)
            #expect(
                try Int.fetchOne(db, sql: "SELECT value FROM status_generation") == before.generation.map { $0 + 1 })
        }
    }

    @Test("the outbox refuses what it refused before, and checks a row without a temporary index")
    func sameConstraintsWithoutTemporaryIndexes() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        try store.write { db in
            for (n, collection) in ["clients", "orders", "devices", "ticket_messages"].enumerated() {
                try db.execute(sql: Self.insertEntry, arguments: [collection, "r\(n)", "k:r\(n)", "k\(n)", "pending"])
            }
            for state in ["in_flight", "failed", "dead", "held", "pending"] {
                try db.execute(sql: "UPDATE outbox SET state = ? WHERE seq = 1", arguments: [state])
            }
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: Self.insertEntry, arguments: ["tickets", "t", "k:t", "k-t", "pending"])
            }
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "UPDATE outbox SET state = 'sent' WHERE seq = 1")
            }
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: Self.insertEntry, arguments: ["orders", "o", "k:o", "k-o", "Pending"])
            }

            // SQLite 3.40 codes a constant list of more than two values as a temporary index (`OpenEphemeral`),
            // made again for every row checked.
            func temporaryIndexes(_ sql: String, _ arguments: StatementArguments) throws -> Int {
                try Row.fetchAll(db, sql: "EXPLAIN " + sql, arguments: arguments)
                    .filter { $0["opcode"] == "OpenEphemeral" }.count
            }
            #expect(try temporaryIndexes(Self.insertEntry, ["orders", "o", "k:o", "k-o", "pending"]) == 0)
            #expect(try temporaryIndexes("UPDATE outbox SET state = ? WHERE seq = 1", ["failed"]) == 0)
        }
    }
}
