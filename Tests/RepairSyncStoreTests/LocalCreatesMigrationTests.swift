import Foundation
import GRDB
import RepairSyncModels
import RepairSyncTestSupport
import Testing

@testable import RepairSyncStore

/// `v4-local-creates` on a store written by the previous version: nothing lost, the rebuilt tables behave as before,
/// and what the migration adds works.
@Suite struct LocalCreatesMigrationTests {
    /// A replica at `v3-in-doubt-and-resync` with an order, its device, two outbox entries (the first change numbers
    /// already used up to 57) and a base.
    static func v3Store(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try ReplicaMigrations.migrator.migrate(queue, upTo: "v3-in-doubt-and-resync")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO orders (id, order_number, status, client_id, created_at, updated_at, version, synced_at)
                    VALUES ('ord_1', 1042, 'booked_in', 'cli_1', '2026-11-20T09:00:00.000Z', '2026-11-20T09:00:00.000Z', 3,
                            '2026-11-20T09:00:00.000Z');
                    INSERT INTO devices (id, order_id, type, status, created_at, updated_at, version, synced_at)
                    VALUES ('dev_1', 'ord_1', 'phone', 'booked_in', '2026-11-20T09:00:00.000Z', '2026-11-20T09:00:00.000Z', 1,
                            '2026-11-20T09:00:00.000Z');
                    INSERT INTO sync_bases (collection, record_id, version, fields)
                    VALUES ('orders', 'ord_1', 3, '{"notes":null,"status":"booked_in"}');
                    INSERT INTO outbox (seq, collection, record_id, order_key, kind, fields, idempotency_key, state, attempts,
                                        created_at, edited_at, sent)
                    VALUES (41, 'orders', 'ord_1', 'orders:ord_1', 'update', '{"notes":"x"}', 'k41', 'pending', 1, 1, 1, 1),
                           (57, 'devices', 'dev_1', 'devices:dev_1', 'update', '{"diagnosis":"y"}', 'k57', 'dead', 2, 1, 1, 0);
                    DELETE FROM outbox WHERE seq = 57;
                    """)
        }
        try queue.close()
    }

    @Test func keepsEverythingAndAddsCreates() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("replica.sqlite")
        try Self.v3Store(at: path)
        let store = try ReplicaStore.open(at: path)
        #expect(
            try store.appliedMigrations().suffix(9) == [
                "v4-local-creates", "v5-list-indexes-and-outbox-counts", "v6-push-priority", "v7-discarded-in-doubt",
                "v8-children-by-their-own-tombstones", "v9-status-generation", "v10-push-priority-by-join",
                "v11-outbox-checks-without-lists", "v12-inserted-messages",
            ])
        #expect(try store.integrityProblems().isEmpty)
        try store.write { db in
            let order = try #require(try Order.fetchOne(db, key: "ord_1"))
            #expect(order.orderNumber == 1042 && order.version == 3)
            #expect(
                try Row.fetchOne(db, sql: "SELECT seq, sent, attempts, idempotency_key FROM outbox")
                    == ["seq": 41, "sent": 1, "attempts": 1, "idempotency_key": "k41"])
            // Change numbers are never used twice: the next one follows the highest ever used.
            try db.execute(
                sql: """
                    INSERT INTO outbox (collection, record_id, order_key, kind, fields, idempotency_key, created_at, edited_at,
                                        depends_on)
                    VALUES ('clients', 'c', 'clients:c', 'create', '{}', 'k-new', 2, 2, NULL)
                    """)
            #expect(db.lastInsertedRowID == 58)
            // An order with no number yet.
            try db.execute(
                sql: """
                    INSERT INTO orders (id, order_number, status, client_id, created_at, updated_at, version)
                    VALUES ('new', NULL, 'booked_in', 'c', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0)
                    """)
            #expect(try Order.fetchOne(db, key: "new")?.displayRef == "#pending")
            // The triggers of the rebuilt table (and of v8): edits noted; the base and the children not yet on the
            // server deleted with the order, a child from the server kept for its own tombstone; an insert not from
            // the server noted.
            #expect(try String.fetchAll(db, sql: "SELECT record_id FROM edited_rows ORDER BY record_id") == ["new"])
            try db.execute(sql: "UPDATE orders SET notes = 'edited' WHERE id = 'ord_1'")
            #expect(
                try String.fetchAll(db, sql: "SELECT record_id FROM edited_rows ORDER BY record_id") == [
                    "new", "ord_1",
                ])
            try db.execute(
                sql: """
                    INSERT INTO devices (id, order_id, type, status, created_at, updated_at, version)
                    VALUES ('dev_new', 'ord_1', 'tablet', 'booked_in', '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0)
                    """)
            try db.execute(sql: "DELETE FROM orders WHERE id = 'ord_1'")
            #expect(try String.fetchAll(db, sql: "SELECT id FROM devices") == ["dev_1"])
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_bases") == 0)
        }
    }
}
