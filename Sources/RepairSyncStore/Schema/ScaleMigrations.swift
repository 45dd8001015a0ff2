internal import GRDB

/// Migration `v5-list-indexes-and-outbox-counts`: what keeps the daemon's work independent of the shop's size
/// (docs/performance.md, "A shop ten times larger").
enum ScaleMigrations {
    static func addListIndexesAndOutboxCounts(_ db: Database) throws {
        try db.execute(
            sql: """
                -- Each list the control socket serves walks an index in its own order and stops at its LIMIT, instead
                -- of sorting the whole table: the newest orders (all, by status, by client), devices, tickets, and
                -- clients by name. The filtered ones replace the single-column indexes they extend.
                CREATE INDEX orders_created ON orders(created_at DESC, order_number DESC);
                DROP INDEX orders_status;
                CREATE INDEX orders_status_created ON orders(status, created_at DESC, order_number DESC);
                DROP INDEX orders_client_id;
                CREATE INDEX orders_client_created ON orders(client_id, created_at DESC, order_number DESC);
                CREATE INDEX devices_created ON devices(created_at DESC, id);
                DROP INDEX devices_status;
                CREATE INDEX devices_status_created ON devices(status, created_at DESC, id);
                DROP INDEX devices_order_id;
                CREATE INDEX devices_order_created ON devices(order_id, created_at, id);
                CREATE INDEX tickets_updated ON tickets(updated_at DESC, id);
                DROP INDEX tickets_status;
                CREATE INDEX tickets_status_updated ON tickets(status, updated_at DESC, id);
                CREATE INDEX clients_name ON clients(last_name, first_name, id);

                -- The outbox's size by state, kept by triggers: the status after each local change reads five rows
                -- instead of counting an outbox that may hold thousands of entries.
                CREATE TABLE outbox_counts (
                    state TEXT PRIMARY KEY NOT NULL,
                    entries INTEGER NOT NULL
                ) STRICT, WITHOUT ROWID;
                INSERT INTO outbox_counts (state, entries)
                    SELECT state, (SELECT COUNT(*) FROM outbox WHERE outbox.state = states.state)
                    FROM (SELECT 'pending' AS state UNION ALL SELECT 'in_flight' UNION ALL SELECT 'failed'
                          UNION ALL SELECT 'dead' UNION ALL SELECT 'held') AS states;
                CREATE TRIGGER outbox_counts_insert AFTER INSERT ON outbox BEGIN
                    UPDATE outbox_counts SET entries = entries + 1 WHERE state = NEW.state;
                END;
                CREATE TRIGGER outbox_counts_delete AFTER DELETE ON outbox BEGIN
                    UPDATE outbox_counts SET entries = entries - 1 WHERE state = OLD.state;
                END;
                CREATE TRIGGER outbox_counts_state AFTER UPDATE OF state ON outbox WHEN OLD.state IS NOT NEW.state BEGIN
                    UPDATE outbox_counts SET entries = entries - 1 WHERE state = OLD.state;
                    UPDATE outbox_counts SET entries = entries + 1 WHERE state = NEW.state;
                END;

                -- The conflict log's size by outcome, kept the same way: the log is an audit trail that only grows,
                -- and the status after each local change reported its counts with a scan and a sort of all of it.
                -- A row appears with the first conflict of its outcome (no OR IGNORE: the statement that fires the
                -- trigger would impose its own conflict handling on it).
                CREATE TABLE conflict_counts (
                    outcome TEXT PRIMARY KEY NOT NULL,
                    entries INTEGER NOT NULL
                ) STRICT, WITHOUT ROWID;
                INSERT INTO conflict_counts (outcome, entries) SELECT outcome, COUNT(*) FROM conflicts GROUP BY outcome;
                CREATE TRIGGER conflict_counts_insert AFTER INSERT ON conflicts BEGIN
                    INSERT INTO conflict_counts (outcome, entries)
                        SELECT NEW.outcome, 0 WHERE NOT EXISTS (SELECT 1 FROM conflict_counts WHERE outcome = NEW.outcome);
                    UPDATE conflict_counts SET entries = entries + 1 WHERE outcome = NEW.outcome;
                END;
                CREATE TRIGGER conflict_counts_delete AFTER DELETE ON conflicts BEGIN
                    UPDATE conflict_counts SET entries = entries - 1 WHERE outcome = OLD.outcome;
                END;
                CREATE TRIGGER conflict_counts_outcome AFTER UPDATE OF outcome ON conflicts
                WHEN OLD.outcome IS NOT NEW.outcome BEGIN
                    UPDATE conflict_counts SET entries = entries - 1 WHERE outcome = OLD.outcome;
                    INSERT INTO conflict_counts (outcome, entries)
                        SELECT NEW.outcome, 0 WHERE NOT EXISTS (SELECT 1 FROM conflict_counts WHERE outcome = NEW.outcome);
                    UPDATE conflict_counts SET entries = entries + 1 WHERE outcome = NEW.outcome;
                END;
                """)
    }
}
