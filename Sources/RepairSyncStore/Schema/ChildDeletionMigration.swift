internal import GRDB

/// `v8-children-by-their-own-tombstones`: deleting an order or a ticket takes with it only the children that exist
/// nowhere else — devices and messages created here and not yet on the server (`synced_at IS NULL`). A child the
/// server has sent goes by its own tombstone, a sweep of its own collection, or retention, like any other record.
///
/// The cascade of v1 took every child: an order that left the replica for a moment (a stale page's tombstone, a
/// 404, a sweep) took its devices, and when the order came back nothing brought them back — unchanged on the
/// server, they were behind the devices' cursor for good (simulator seed 75063). The contract makes the server
/// announce a cascade's deletions one tombstone each, so the replica needs no cascade of its own to stay exact.
enum ChildDeletionMigration {
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER orders_delete_devices;
                CREATE TRIGGER orders_delete_devices AFTER DELETE ON orders BEGIN
                    DELETE FROM devices WHERE order_id = OLD.id AND synced_at IS NULL;
                END;
                DROP TRIGGER tickets_delete_messages;
                CREATE TRIGGER tickets_delete_messages AFTER DELETE ON tickets BEGIN
                    DELETE FROM ticket_messages WHERE ticket_id = OLD.id AND synced_at IS NULL;
                END;
                """)
    }
}
