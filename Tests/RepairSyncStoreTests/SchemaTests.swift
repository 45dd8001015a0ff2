import Foundation
import GRDB
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

@Suite struct SchemaTests {
    @Test func migratesFromEmpty() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        #expect(
            try store.appliedMigrations() == [
                "v1-replica", "v2-engine", "v3-in-doubt-and-resync", "v4-local-creates",
                "v5-list-indexes-and-outbox-counts", "v6-push-priority", "v7-discarded-in-doubt",
                "v8-children-by-their-own-tombstones", "v9-status-generation", "v10-push-priority-by-join",
                "v11-outbox-checks-without-lists", "v12-inserted-messages",
            ])
        let tables = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(
            tables == [
                "clients", "conflict_counts", "conflicts", "dashboard_snapshots", "devices", "edited_rows",
                "grdb_migrations",
                "orders", "outbox", "outbox_counts", "push_priorities", "resync_marks", "sqlite_sequence",
                "status_generation",
                "sync_bases", "sync_metadata", "ticket_messages", "tickets",
            ])
        let metadata = try store.read { db in try SyncMetadata.fetchAll(db) }
        #expect(Set(metadata.map(\.collection)) == Set(SyncCollection.allCases))
        #expect(metadata.allSatisfy { $0.state == .initial && $0.cursor == nil })
    }

    @Test func usesWALAndFullSync() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        let (journal, synchronous) = try store.write { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(journal == "wal")
        #expect(synchronous == 2)  // FULL
    }

    @Test func columnsMatchTheRecordTypes() throws {
        let store = try ReplicaStore.inMemory()
        func columns(_ table: String) throws -> [String] {
            try store.read { db in try db.columns(in: table).map(\.name) }
        }
        #expect(try columns("orders") == Order.columnNames + ["synced_at"])
        #expect(try columns("devices") == Device.columnNames + ["synced_at"])
        #expect(try columns("clients") == Client.columnNames + ["synced_at"])
        #expect(try columns("tickets") == Ticket.columnNames + ["synced_at"])
        #expect(try columns("ticket_messages") == TicketMessage.columnNames + ["synced_at"])
    }

    @Test(
        "the outbox's counts by state, kept by triggers, equal a count of the outbox through inserts, state changes and deletes"
    )
    func outboxCountsFollowTheOutbox() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        func kept() throws -> [String: Int] {
            try store.read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT state, entries FROM outbox_counts").map {
                        ($0["state"] as String, $0["entries"] as Int)
                    })
            }
        }
        func counted() throws -> [String: Int] {
            try store.read { db in
                var counts = ["pending": 0, "in_flight": 0, "failed": 0, "dead": 0, "held": 0]
                for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM outbox GROUP BY state") {
                    counts[row["state"] as String] = row["n"] as Int
                }
                return counts
            }
        }
        #expect(try kept() == counted())
        try store.write { db in
            for n in 0..<12 {
                try db.execute(
                    sql: """
                        INSERT INTO outbox (collection, record_id, order_key, kind, fields, idempotency_key, created_at, edited_at)
                        VALUES ('orders', ?, ?, 'update', '{}', ?, 0, 0)
                        """, arguments: ["ord_\(n)", "orders/ord_\(n)", "key-\(n)"])
            }
        }
        #expect(try kept()["pending"] == 12)
        try store.write { db in
            try db.execute(sql: "UPDATE outbox SET state = 'in_flight' WHERE seq % 3 = 0")
            try db.execute(sql: "UPDATE outbox SET state = 'dead' WHERE seq % 3 = 1")
            try db.execute(sql: "UPDATE outbox SET state = 'dead' WHERE seq % 3 = 1")  // no change of state: no count
            try db.execute(sql: "UPDATE outbox SET attempts = attempts + 1")  // not the state: no count
            try db.execute(sql: "DELETE FROM outbox WHERE seq % 4 = 0")
        }
        #expect(try kept() == counted())
        #expect(try kept().values.reduce(0, +) == 9)
    }

    @Test(
        "the conflict log's counts by outcome, kept by triggers, equal a count of the log through inserts, resolutions and deletes"
    )
    func conflictCountsFollowTheLog() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        func kept() throws -> [String: Int] {
            try store.read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(
                        db, sql: "SELECT outcome, entries FROM conflict_counts WHERE entries > 0"
                    ).map { ($0["outcome"] as String, $0["entries"] as Int) })
            }
        }
        func counted() throws -> [String: Int] {
            try store.read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(
                        db, sql: "SELECT outcome, COUNT(*) AS n FROM conflicts GROUP BY outcome"
                    ).map { ($0["outcome"] as String, $0["n"] as Int) })
            }
        }
        #expect(try kept().isEmpty)
        try store.write { db in
            for (n, outcome) in ["merged", "awaiting_decision", "kept_remote", "awaiting_decision", "merged", "merged"]
                .enumerated()
            {
                try db.execute(
                    sql: """
                        INSERT INTO conflicts (collection, record_id, fields, base, local, remote, policy, outcome, state, detected_at)
                        VALUES ('orders', ?, 'notes', '{}', '{}', '{}', 'merge', ?, ?, 0)
                        """, arguments: ["ord_\(n)", outcome, outcome == "awaiting_decision" ? "open" : "resolved"])
            }
        }
        #expect(try kept() == ["merged": 3, "awaiting_decision": 2, "kept_remote": 1])
        try store.write { db in
            try db.execute(
                sql:
                    "UPDATE conflicts SET state = 'resolved', outcome = 'kept_local' WHERE outcome = 'awaiting_decision'"
            )
            try db.execute(sql: "UPDATE conflicts SET remote = '{\"notes\":\"x\"}'")  // not the outcome: no count
            try db.execute(sql: "DELETE FROM conflicts WHERE outcome = 'kept_remote'")
        }
        #expect(try kept() == counted())
        #expect(try kept() == ["merged": 3, "kept_local": 2])
    }

    @Test(
        "deleting an order or a ticket takes only its children not yet on the server: the others go by their own tombstones"
    )
    func parentsTakeOnlyLocalChildren() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        let at = "'2026-11-22T10:00:00.000Z'"
        try store.write { db in
            try db.execute(
                sql: """
                    INSERT INTO orders (id, order_number, status, client_id, created_at, updated_at, version, synced_at)
                    VALUES ('ord_1', 1001, 'booked_in', 'cli_1', \(at), \(at), 1, \(at));
                    INSERT INTO devices (id, order_id, type, status, created_at, updated_at, version, synced_at)
                    VALUES ('dev_server', 'ord_1', 'phone', 'booked_in', \(at), \(at), 1, \(at)),
                           ('dev_local', 'ord_1', 'phone', 'booked_in', \(at), \(at), 0, NULL);
                    INSERT INTO tickets (id, ticket_number, subject, status, client_email, created_at, updated_at, version, synced_at)
                    VALUES ('tkt_1', 1, 'Screen', 'open', 'a@example.com', \(at), \(at), 1, \(at));
                    INSERT INTO ticket_messages (id, ticket_id, content, sender_type, is_internal, created_at, updated_at, version, synced_at)
                    VALUES ('msg_server', 'tkt_1', 'hello', 'client', 0, \(at), \(at), 1, \(at)),
                           ('msg_local', 'tkt_1', 'reply', 'staff', 0, \(at), \(at), 0, NULL);
                    DELETE FROM orders WHERE id = 'ord_1';
                    DELETE FROM tickets WHERE id = 'tkt_1';
                    """)
            #expect(try String.fetchAll(db, sql: "SELECT id FROM devices") == ["dev_server"])
            #expect(try String.fetchAll(db, sql: "SELECT id FROM ticket_messages") == ["msg_server"])
        }
    }

    @Test func indexesExist() throws {
        let store = try ReplicaStore.inMemory()
        let indexed = try store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT m.name AS tbl, ii.name AS col FROM sqlite_master m
                    JOIN pragma_index_list(m.name) il JOIN pragma_index_info(il.name) ii
                    WHERE m.type = 'table' AND ii.seqno = 0
                    """
            ).map { "\($0["tbl"] as String).\($0["col"] as String)" }
        }
        for expected in [
            "orders.order_number", "orders.status", "orders.client_id", "devices.order_id", "devices.status",
            "clients.email", "tickets.ticket_number", "tickets.status", "ticket_messages.ticket_id",
        ] {
            #expect(indexed.contains(expected), "no index leads with \(expected)")
        }
    }

    @Test(
        "the list indexes a bulk load drops are, name and definition, those the migrations made; a table with rows keeps them"
    )
    func listIndexesAreTheMigrations() throws {
        let store = try ReplicaStore.inMemory()
        let schema = try store.read { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(
                    db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
                )
                .map { ($0["name"] as String, $0["sql"] as String) })
        }
        for index in ListIndexes.all {
            #expect(schema[index.name] == index.sql, "\(index.name)")
        }
        #expect(Set(ListIndexes.all.map(\.table)) == ["orders", "devices", "tickets", "clients"])

        try store.write { db in
            try db.execute(
                sql: """
                    INSERT INTO clients (id, email, first_name, last_name, order_count, total_spent, created_at, updated_at, version)
                    VALUES ('cli_1', 'a@example.com', 'A', 'B', 0, '0', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 1)
                    """)
        }
        #expect(try store.write { db in try ListIndexes.dropForBulkLoad(on: "clients", db) } == false)
        #expect(try store.read { db in try ListIndexes.missing(on: "clients", db) }.isEmpty)
        #expect(try store.write { db in try ListIndexes.dropForBulkLoad(on: "orders", db) } == true)
        #expect(
            try store.read { db in try ListIndexes.missing(on: "orders", db) }.map(\.name)
                == ListIndexes.of("orders").map(\.name))
        #expect(
            try store.write { db in try ListIndexes.create(on: "orders", db) } == ListIndexes.of("orders").map(\.name))
        #expect(try store.read { db in try ListIndexes.missing(on: "orders", db) }.isEmpty)
    }

    @Test func fileIsPrivateToItsOwner() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("replica.sqlite")
        _ = try ReplicaStore.open(at: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func refusesAFileThatIsNotADatabase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("replica.sqlite")
        try Data("this is not sqlite, just text that is long enough to look like a header".utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { try ReplicaStore.open(at: path) }
        // The file is left as it was, for the admin to look at.
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("this is not sqlite"))
    }
}
