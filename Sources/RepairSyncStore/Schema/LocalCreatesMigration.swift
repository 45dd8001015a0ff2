internal import GRDB

/// `v4-local-creates`: clients, orders and devices can be created here and pushed later (docs/api.md section 4.7).
///
/// - The outbox takes `clients` (its CHECK needs a table rebuild) and two columns: `depends_on`, the order key of
///   the create an entry waits for (a new order waits for its new client, a new device for its new order), and
///   `blocked_by`, set on entries made dead because a create they wait for is dead (so that retrying or settling
///   that create brings them back).
/// - `orders.order_number` may be NULL: the server assigns the number when it creates the order, and until then a
///   local order has none (never a guess that could collide with a real number).
/// - Rows another program inserts (not from the server: `synced_at` NULL) are noted in `edited_rows`, so that a run
///   queues their creation even if the program's `queueChange` comes late or never.
enum LocalCreatesMigration {
    static func migrate(_ db: Database) throws {
        // The AUTOINCREMENT counter goes with the old table: kept, so that no change number is ever used twice.
        let lastSeq = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'") ?? 0
        try db.execute(
            sql: """
                CREATE TABLE outbox_v4 (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    collection TEXT NOT NULL CHECK (collection IN ('clients', 'orders', 'devices', 'ticket_messages')),
                    record_id TEXT NOT NULL,
                    order_key TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('update', 'create')),
                    fields TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL UNIQUE,
                    state TEXT NOT NULL DEFAULT 'pending'
                        CHECK (state IN ('pending', 'in_flight', 'failed', 'dead', 'held')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER,
                    last_error TEXT,
                    created_at INTEGER NOT NULL,
                    edited_at INTEGER NOT NULL,
                    sent INTEGER NOT NULL DEFAULT 0 CHECK (sent IN (0, 1)),
                    depends_on TEXT,
                    blocked_by TEXT
                ) STRICT;
                INSERT INTO outbox_v4 (seq, collection, record_id, order_key, kind, fields, idempotency_key, state,
                                       attempts, next_attempt_at, last_error, created_at, edited_at, sent)
                SELECT seq, collection, record_id, order_key, kind, fields, idempotency_key, state, attempts,
                       next_attempt_at, last_error, created_at, edited_at, sent FROM outbox;
                DROP TABLE outbox;
                ALTER TABLE outbox_v4 RENAME TO outbox;
                CREATE INDEX outbox_record ON outbox(collection, record_id);
                CREATE INDEX outbox_order_key ON outbox(order_key, seq);
                CREATE INDEX outbox_state ON outbox(state);
                CREATE INDEX outbox_depends_on ON outbox(depends_on) WHERE depends_on IS NOT NULL;
                CREATE INDEX outbox_blocked_by ON outbox(blocked_by) WHERE blocked_by IS NOT NULL;
                """)
        try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'outbox'")
        try db.execute(
            sql: "INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox', max(?, coalesce(MAX(seq), 0)) FROM outbox",
            arguments: [lastSeq])

        try db.execute(
            sql: """
                -- order_number: NULL until the server has created the order (an order booked in here).
                CREATE TABLE orders_v4 (
                    id TEXT PRIMARY KEY NOT NULL,
                    order_number INTEGER,
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
                INSERT INTO orders_v4 (id, order_number, status, total, deposit, balance, notes, client_id,
                    client_name, client_email, client_phone, location_id, location_name, assigned_user_id,
                    assigned_user_name, device_count, created_at, updated_at, version, synced_at)
                SELECT id, order_number, status, total, deposit, balance, notes, client_id, client_name,
                    client_email, client_phone, location_id, location_name, assigned_user_id, assigned_user_name,
                    device_count, created_at, updated_at, version, synced_at FROM orders;
                DROP TABLE orders;
                ALTER TABLE orders_v4 RENAME TO orders;
                CREATE INDEX orders_order_number ON orders(order_number);
                CREATE INDEX orders_status ON orders(status);
                CREATE INDEX orders_client_id ON orders(client_id);
                -- The triggers of v1, v2 and v3 went with the old table.
                CREATE TRIGGER orders_delete_devices AFTER DELETE ON orders BEGIN
                    DELETE FROM devices WHERE order_id = OLD.id;
                END;
                CREATE TRIGGER orders_delete_base AFTER DELETE ON orders BEGIN
                    DELETE FROM sync_bases WHERE collection = 'orders' AND record_id = OLD.id;
                END;
                CREATE TRIGGER orders_edited AFTER UPDATE OF status, notes ON orders
                WHEN OLD.status IS NOT NEW.status OR OLD.notes IS NOT NEW.notes BEGIN
                    INSERT INTO edited_rows (collection, record_id) SELECT 'orders', NEW.id
                    WHERE NOT EXISTS (SELECT 1 FROM edited_rows WHERE collection = 'orders' AND record_id = NEW.id);
                END;
                """)

        for table in ["clients", "orders", "devices"] {
            try db.execute(
                sql: """
                    CREATE TRIGGER \(table)_inserted AFTER INSERT ON \(table) WHEN NEW.synced_at IS NULL BEGIN
                        INSERT INTO edited_rows (collection, record_id) SELECT '\(table)', NEW.id
                        WHERE NOT EXISTS (SELECT 1 FROM edited_rows WHERE collection = '\(table)' AND record_id = NEW.id);
                    END;
                    """)
        }
    }
}
