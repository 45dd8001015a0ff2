internal import GRDB

/// `v11-outbox-checks-without-lists`: the outbox's `CHECK (collection IN (…))` and `CHECK (state IN (…))` say the
/// same with `=` and `OR`. SQLite (3.40 here) codes a constant `IN` list of more than two values as a temporary index —
/// opened, filled and freed for every row it checks: every entry queued and every change of an entry's state. The two
/// were 10 µs of an insert's 55 (Python's `sqlite3` on a copy of the bench's store, its triggers included). Lists of two
/// (`kind`, `sent`) are coded as comparisons already and stay.
///
/// A constraint cannot be altered in place, so the table is rebuilt as `v4-local-creates` rebuilt it: a new table,
/// the rows copied (their values are unchanged and already satisfy the same constraints), the old one dropped — with
/// its indexes and triggers, which are made again from their own SQL in the schema — and the `AUTOINCREMENT`
/// counter carried over, so that no change number is ever used twice. The triggers do not fire while the rows are
/// copied (the new table has none yet), so the outbox counts and the status generation stay as they were.
enum OutboxChecksMigration {
    static func migrate(_ db: Database) throws {
        let lastSeq = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'") ?? 0
        // Indexes before triggers, each in the order it was made (a trigger may rely on an index, never the reverse).
        let dependents = try String.fetchAll(
            db,
            sql: """
                SELECT sql FROM sqlite_master WHERE tbl_name = 'outbox' AND type IN ('index', 'trigger') AND sql IS NOT NULL
                ORDER BY type = 'trigger', rowid
                """)
        try db.execute(
            sql: """
                CREATE TABLE outbox_v11 (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    collection TEXT NOT NULL CHECK (
                        collection = 'clients' OR collection = 'orders' OR collection = 'devices'
                        OR collection = 'ticket_messages'),
                    record_id TEXT NOT NULL,
                    order_key TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('update', 'create')),
                    fields TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL UNIQUE,
                    state TEXT NOT NULL DEFAULT 'pending' CHECK (
                        state = 'pending' OR state = 'in_flight' OR state = 'failed' OR state = 'dead' OR state = 'held'),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER,
                    last_error TEXT,
                    created_at INTEGER NOT NULL,
                    edited_at INTEGER NOT NULL,
                    sent INTEGER NOT NULL DEFAULT 0 CHECK (sent IN (0, 1)),
                    depends_on TEXT,
                    blocked_by TEXT,
                    priority INTEGER NOT NULL DEFAULT 2
                ) STRICT;
                INSERT INTO outbox_v11 (seq, collection, record_id, order_key, kind, fields, idempotency_key, state,
                                        attempts, next_attempt_at, last_error, created_at, edited_at, sent, depends_on,
                                        blocked_by, priority)
                SELECT seq, collection, record_id, order_key, kind, fields, idempotency_key, state, attempts,
                       next_attempt_at, last_error, created_at, edited_at, sent, depends_on, blocked_by, priority
                FROM outbox;
                DROP TABLE outbox;
                ALTER TABLE outbox_v11 RENAME TO outbox;
                """)
        for sql in dependents { try db.execute(sql: sql) }
        try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'outbox'")
        try db.execute(
            sql: "INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox', max(?, coalesce(MAX(seq), 0)) FROM outbox",
            arguments: [lastSeq])
    }
}
