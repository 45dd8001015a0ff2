import GRDB
import RepairSyncTestSupport
import Testing

@testable import RepairSyncStore

/// `v12-inserted-messages`: message rows another program inserted and never queued are noted for the next run —
/// those already in a store when it migrates, and every one inserted after.
@Suite("Migration v12: inserted messages")
struct InsertedMessagesMigrationTests {
    static let message = """
        INSERT INTO ticket_messages (id, ticket_id, content, sender_type, is_internal, created_at, updated_at, version,
                                     synced_at)
        VALUES (?, 'tkt_1', 'hello', 'staff', 0, '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z', 0, ?)
        """

    static func notes(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT record_id FROM edited_rows WHERE collection = 'ticket_messages' ORDER BY record_id")
    }

    @Test("a stranded message of an older store is noted once; a queued or synced one is not; new inserts are noted")
    func notesInsertedMessages() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("replica.sqlite")
        let queue = try DatabaseQueue(path: path)
        try ReplicaMigrations.migrator.migrate(queue, upTo: "v11-outbox-checks-without-lists")
        try queue.write { db in
            try db.execute(sql: Self.message, arguments: ["a-stranded", nil])
            try db.execute(sql: Self.message, arguments: ["b-queued", nil])
            try db.execute(sql: Self.message, arguments: ["c-synced", "2026-11-22T10:00:01.000Z"])
            try db.execute(
                sql: """
                    INSERT INTO outbox (collection, record_id, order_key, kind, fields, idempotency_key, created_at,
                                        edited_at)
                    VALUES ('ticket_messages', 'b-queued', 'tickets:tkt_1', 'create', '{}', 'k1', 1, 1)
                    """)
            #expect(try Self.notes(db).isEmpty, "nothing noted messages before v12")
        }
        try queue.close()
        let store = try ReplicaStore.open(at: path)
        try store.write { db in
            #expect(try Self.notes(db) == ["a-stranded"])
            try db.execute(sql: Self.message, arguments: ["d-inserted", nil])
            try db.execute(sql: Self.message, arguments: ["e-pulled", "2026-11-22T10:00:02.000Z"])
            #expect(try Self.notes(db) == ["a-stranded", "d-inserted"])
        }
    }
}
