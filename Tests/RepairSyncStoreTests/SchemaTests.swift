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
        #expect(try store.appliedMigrations() == ["v1-replica", "v2-engine", "v3-in-doubt-and-resync", "v4-local-creates"])
        let tables = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(
            tables == [
                "clients", "conflicts", "dashboard_snapshots", "devices", "edited_rows", "grdb_migrations", "orders", "outbox",
                "resync_marks", "sqlite_sequence", "sync_bases", "sync_metadata", "ticket_messages", "tickets",
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
