internal import GRDB

/// The replica's schema, as a list of named migrations.
///
/// A migration that has shipped is frozen: later changes are new migrations appended to the list, never edits of
/// old ones. Table and column names are spelled out as strings here, not taken from Swift types, so that renaming
/// a Swift property can never change what an old migration does.
enum ReplicaMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-replica", migrate: createReplicaTables)
        migrator.registerMigration("v2-engine", migrate: EngineMigrations.createEngineTables)
        migrator.registerMigration("v3-in-doubt-and-resync", migrate: EngineMigrations.addInDoubtAndResyncMarks)
        migrator.registerMigration("v4-local-creates", migrate: LocalCreatesMigration.migrate)
        // After the local creates' table rebuilds, which would drop the indexes and triggers it adds.
        migrator.registerMigration(
            "v5-list-indexes-and-outbox-counts", migrate: ScaleMigrations.addListIndexesAndOutboxCounts)
        migrator.registerMigration("v6-push-priority", migrate: PushPriorityMigration.migrate)
        migrator.registerMigration("v7-discarded-in-doubt", migrate: DiscardedInDoubtMigration.migrate)
        migrator.registerMigration("v8-children-by-their-own-tombstones", migrate: ChildDeletionMigration.migrate)
        migrator.registerMigration("v9-status-generation", migrate: StatusGenerationMigration.migrate)
        migrator.registerMigration("v10-push-priority-by-join", migrate: PushPriorityJoinMigration.migrate)
        migrator.registerMigration("v11-outbox-checks-without-lists", migrate: OutboxChecksMigration.migrate)
        migrator.registerMigration("v12-inserted-messages", migrate: InsertedMessagesMigration.migrate)
        return migrator
    }

    /// The five mirrored collections and the per-collection sync metadata.
    ///
    /// - Tables are STRICT: a local program that writes the replica cannot store a word in `version`.
    /// - Money is canonical decimal text (`"149.99"`) in TEXT columns: exact, and TEXT affinity turns a number a
    ///   local tool might write into its text instead of a binary floating point value.
    /// - Timestamps are fixed-width RFC 3339 UTC text (`2026-11-22T13:05:09.120Z`), which sorts in time order.
    /// - No FOREIGN KEY constraints: a changes page may bring a device before its order. Deleting a parent deletes
    ///   its children through the triggers below (since v8 only those not yet on the server: the others go by
    ///   their own tombstones, `ChildDeletionMigration`).
    static func createReplicaTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE clients (
                    id TEXT PRIMARY KEY NOT NULL,
                    email TEXT NOT NULL,
                    first_name TEXT,
                    last_name TEXT,
                    phone TEXT,
                    company TEXT,
                    address TEXT,
                    city TEXT,
                    postcode TEXT,
                    notes TEXT,
                    order_count INTEGER NOT NULL DEFAULT 0,
                    total_spent TEXT NOT NULL DEFAULT '0',
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    synced_at TEXT
                ) STRICT;
                CREATE INDEX clients_email ON clients(email);

                CREATE TABLE orders (
                    id TEXT PRIMARY KEY NOT NULL,
                    order_number INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    total TEXT,
                    deposit TEXT,
                    balance TEXT,
                    notes TEXT,
                    client_id TEXT NOT NULL,
                    client_name TEXT,
                    client_email TEXT,
                    client_phone TEXT,
                    location_id TEXT,
                    location_name TEXT,
                    assigned_user_id TEXT,
                    assigned_user_name TEXT,
                    device_count INTEGER,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    synced_at TEXT
                ) STRICT;
                CREATE INDEX orders_order_number ON orders(order_number);
                CREATE INDEX orders_status ON orders(status);
                CREATE INDEX orders_client_id ON orders(client_id);

                CREATE TABLE devices (
                    id TEXT PRIMARY KEY NOT NULL,
                    order_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    brand TEXT,
                    model TEXT,
                    serial TEXT,
                    imei TEXT,
                    passcode TEXT,
                    status TEXT NOT NULL,
                    issue TEXT,
                    diagnosis TEXT,
                    resolution TEXT,
                    price TEXT,
                    assigned_user_id TEXT,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    synced_at TEXT
                ) STRICT;
                CREATE INDEX devices_order_id ON devices(order_id);
                CREATE INDEX devices_status ON devices(status);

                CREATE TABLE tickets (
                    id TEXT PRIMARY KEY NOT NULL,
                    ticket_number INTEGER NOT NULL,
                    subject TEXT NOT NULL,
                    status TEXT NOT NULL,
                    priority TEXT,
                    client_id TEXT,
                    client_email TEXT NOT NULL,
                    client_name TEXT,
                    assigned_user_id TEXT,
                    assigned_user_name TEXT,
                    order_id TEXT,
                    order_ref TEXT,
                    message_count INTEGER,
                    last_message_at TEXT,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    synced_at TEXT
                ) STRICT;
                CREATE INDEX tickets_ticket_number ON tickets(ticket_number);
                CREATE INDEX tickets_status ON tickets(status);

                CREATE TABLE ticket_messages (
                    id TEXT PRIMARY KEY NOT NULL,
                    ticket_id TEXT NOT NULL,
                    content TEXT NOT NULL,
                    sender_type TEXT NOT NULL,
                    sender_name TEXT,
                    sender_id TEXT,
                    is_internal INTEGER NOT NULL CHECK (is_internal IN (0, 1)),
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    synced_at TEXT
                ) STRICT;
                CREATE INDEX ticket_messages_ticket_id ON ticket_messages(ticket_id, created_at);

                CREATE TRIGGER orders_delete_devices AFTER DELETE ON orders BEGIN
                    DELETE FROM devices WHERE order_id = OLD.id;
                END;
                CREATE TRIGGER tickets_delete_messages AFTER DELETE ON tickets BEGIN
                    DELETE FROM ticket_messages WHERE ticket_id = OLD.id;
                END;

                CREATE TABLE sync_metadata (
                    collection TEXT PRIMARY KEY NOT NULL,
                    cursor TEXT,
                    last_synced_at TEXT,
                    last_success_at TEXT,
                    state TEXT NOT NULL DEFAULT 'initial',
                    last_error TEXT
                ) STRICT;
                INSERT INTO sync_metadata (collection) VALUES
                    ('clients'), ('orders'), ('devices'), ('tickets'), ('ticket_messages');
                """)
    }
}
