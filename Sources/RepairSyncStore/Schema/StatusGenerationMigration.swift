internal import GRDB

/// `v9-status-generation`: a number raised, by triggers, with every change of the counts the status shows — an
/// outbox entry added, removed or moved to another state, a conflict logged, removed, decided or given another
/// outcome. Counts read with it can be ordered wherever they were read (a reader, or a group commit's own
/// transaction), so that the status never shows older counts after newer ones.
enum StatusGenerationMigration {
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE status_generation (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    value INTEGER NOT NULL
                ) STRICT;
                INSERT INTO status_generation (id, value) VALUES (1, 0);
                CREATE TRIGGER status_generation_outbox_insert AFTER INSERT ON outbox BEGIN
                    UPDATE status_generation SET value = value + 1;
                END;
                CREATE TRIGGER status_generation_outbox_delete AFTER DELETE ON outbox BEGIN
                    UPDATE status_generation SET value = value + 1;
                END;
                CREATE TRIGGER status_generation_outbox_state AFTER UPDATE OF state ON outbox
                WHEN OLD.state IS NOT NEW.state BEGIN
                    UPDATE status_generation SET value = value + 1;
                END;
                CREATE TRIGGER status_generation_conflict_insert AFTER INSERT ON conflicts BEGIN
                    UPDATE status_generation SET value = value + 1;
                END;
                CREATE TRIGGER status_generation_conflict_delete AFTER DELETE ON conflicts BEGIN
                    UPDATE status_generation SET value = value + 1;
                END;
                CREATE TRIGGER status_generation_conflict_state AFTER UPDATE OF state, outcome ON conflicts
                WHEN OLD.state IS NOT NEW.state OR OLD.outcome IS NOT NEW.outcome BEGIN
                    UPDATE status_generation SET value = value + 1;
                END;
                """)
    }
}
