internal import GRDB

/// `v12-inserted-messages`: a message row another program inserts (`synced_at` NULL) is noted in `edited_rows`, as
/// clients, orders and devices are since v4, so that the next run queues it when the program never called
/// `queueChange` — it died between its insert and the call, or left the call out. Before, such a message stayed on
/// its ticket in the replica, looking sent, and never went out. Rows already in that state are noted once here.
enum InsertedMessagesMigration {
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TRIGGER ticket_messages_inserted AFTER INSERT ON ticket_messages WHEN NEW.synced_at IS NULL
                BEGIN
                    INSERT INTO edited_rows (collection, record_id) SELECT 'ticket_messages', NEW.id
                    WHERE NOT EXISTS (
                        SELECT 1 FROM edited_rows WHERE collection = 'ticket_messages' AND record_id = NEW.id);
                END;
                INSERT INTO edited_rows (collection, record_id)
                SELECT 'ticket_messages', m.id FROM ticket_messages m
                WHERE m.synced_at IS NULL
                    AND NOT EXISTS (SELECT 1 FROM outbox WHERE collection = 'ticket_messages' AND record_id = m.id)
                    AND NOT EXISTS (
                        SELECT 1 FROM edited_rows WHERE collection = 'ticket_messages' AND record_id = m.id);
                """)
    }
}
