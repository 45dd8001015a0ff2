internal import GRDB

/// The sync engine's own tables (migration `v2-engine`): the outbox of local changes, the base copies the
/// three-way merge needs, the conflict audit log and the dashboard snapshot.
///
/// Engine times are integer milliseconds since 1970 (UTC): they are compared and added to, never shown raw.
enum EngineMigrations {
    static func createEngineTables(_ db: Database) throws {
        try db.execute(
            sql: """
                -- One row per local change not yet acknowledged by the server. `seq` is the enqueue order; changes
                -- with the same `order_key` (a record, or a ticket for its new messages) are pushed in seq order.
                CREATE TABLE outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    collection TEXT NOT NULL CHECK (collection IN ('orders', 'devices', 'ticket_messages')),
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
                    edited_at INTEGER NOT NULL
                ) STRICT;
                CREATE INDEX outbox_record ON outbox(collection, record_id);
                CREATE INDEX outbox_order_key ON outbox(order_key, seq);
                CREATE INDEX outbox_state ON outbox(state);

                -- The last server copy of each order's and device's changeable fields, and its version: what a
                -- local edit is diffed against and what the three-way merge calls the base.
                CREATE TABLE sync_bases (
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    fields TEXT NOT NULL,
                    PRIMARY KEY (collection, record_id)
                ) STRICT, WITHOUT ROWID;
                CREATE TRIGGER orders_delete_base AFTER DELETE ON orders BEGIN
                    DELETE FROM sync_bases WHERE collection = 'orders' AND record_id = OLD.id;
                END;
                CREATE TRIGGER devices_delete_base AFTER DELETE ON devices BEGIN
                    DELETE FROM sync_bases WHERE collection = 'devices' AND record_id = OLD.id;
                END;

                -- Every conflict and how it was resolved (automatic or manual); open ones wait for a decision.
                CREATE TABLE conflicts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    fields TEXT NOT NULL,
                    base TEXT NOT NULL,
                    local TEXT NOT NULL,
                    remote TEXT NOT NULL,
                    remote_version INTEGER,
                    policy TEXT NOT NULL,
                    outcome TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('open', 'resolved')),
                    detected_at INTEGER NOT NULL,
                    resolved_at INTEGER
                ) STRICT;
                CREATE INDEX conflicts_state ON conflicts(state, collection, record_id);

                CREATE TABLE dashboard_snapshots (
                    period TEXT PRIMARY KEY NOT NULL,
                    body TEXT NOT NULL,
                    fetched_at INTEGER NOT NULL
                ) STRICT;
                """)
    }

    /// `v3-in-doubt-and-resync`: an entry remembers that its idempotency key may have reached the server (`sent`),
    /// so that nothing coalesces into it and a pull does not mistake its write for someone else's; a resync after a
    /// 410 marks the ids it holds (`resync_marks`) to delete those the server no longer returns; triggers note rows
    /// whose changeable columns were written (`edited_rows`), so that an edit another program never queued is found.
    static func addInDoubtAndResyncMarks(_ db: Database) throws {
        try db.execute(
            sql: """
                -- 1: the entry's current idempotency key may have reached the server and no final answer for it is
                -- known (set before the request leaves; cleared when the key is replaced or answered for good).
                ALTER TABLE outbox ADD COLUMN sent INTEGER NOT NULL DEFAULT 0 CHECK (sent IN (0, 1));
                UPDATE outbox SET sent = 1 WHERE attempts > 0 OR state = 'in_flight';

                -- The ids a collection held when its resync from the beginning started; each page of the resync
                -- unmarks the ids it brings, and the end of the resync deletes those still marked.
                CREATE TABLE resync_marks (
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    PRIMARY KEY (collection, record_id)
                ) STRICT, WITHOUT ROWID;

                -- Rows whose changeable columns were written, by anyone, since the engine last looked: the engine
                -- queues what another program wrote and never queued (its `queueChange` may come late, or never).
                -- (Not INSERT OR IGNORE: an upsert that fires the trigger imposes its own conflict handling.)
                CREATE TABLE edited_rows (
                    collection TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    PRIMARY KEY (collection, record_id)
                ) STRICT, WITHOUT ROWID;
                CREATE TRIGGER orders_edited AFTER UPDATE OF status, notes ON orders
                WHEN OLD.status IS NOT NEW.status OR OLD.notes IS NOT NEW.notes BEGIN
                    INSERT INTO edited_rows (collection, record_id) SELECT 'orders', NEW.id
                    WHERE NOT EXISTS (SELECT 1 FROM edited_rows WHERE collection = 'orders' AND record_id = NEW.id);
                END;
                CREATE TRIGGER devices_edited AFTER UPDATE OF status, diagnosis, resolution ON devices
                WHEN OLD.status IS NOT NEW.status OR OLD.diagnosis IS NOT NEW.diagnosis
                    OR OLD.resolution IS NOT NEW.resolution BEGIN
                    INSERT INTO edited_rows (collection, record_id) SELECT 'devices', NEW.id
                    WHERE NOT EXISTS (SELECT 1 FROM edited_rows WHERE collection = 'devices' AND record_id = NEW.id);
                END;
                """)
    }
}
