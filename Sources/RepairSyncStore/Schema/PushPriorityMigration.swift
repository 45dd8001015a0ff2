public import GRDB
public import RepairSyncModels

/// `v6-push-priority`: every outbox entry carries the class it is pushed in (`PushPriority`), kept by triggers from
/// the table of classes the daemon is configured with — whichever code writes an entry's fields, and whenever.
///
/// - `outbox.priority`: 0 critical, 1 high, 2 normal. An update is classed by its most urgent field, a create of a
///   client, an order or a device by `create`, a ticket message by `public` or `internal`; what the table does not
///   name is normal.
/// - `push_priorities (collection, subject, priority)`: the configured classes. `PushPriorityTable.install` replaces
///   them when the engine opens, and classes every entry again.
enum PushPriorityMigration {
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE outbox ADD COLUMN priority INTEGER NOT NULL DEFAULT 2;
                CREATE TABLE push_priorities (
                    collection TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    priority INTEGER NOT NULL CHECK (priority BETWEEN 0 AND 2),
                    PRIMARY KEY (collection, subject)
                ) STRICT, WITHOUT ROWID;
                CREATE TRIGGER outbox_priority_insert AFTER INSERT ON outbox BEGIN
                    UPDATE outbox SET priority = \(firstExpression(row: "NEW")) WHERE seq = NEW.seq;
                END;
                CREATE TRIGGER outbox_priority_fields AFTER UPDATE OF fields ON outbox BEGIN
                    UPDATE outbox SET priority = \(firstExpression(row: "NEW")) WHERE seq = NEW.seq;
                END;
                """)
        try PushPriorityTable.install(PushPriorityRule.defaults, db)
    }

    /// The class as this migration's triggers computed it, frozen with it: its `IN (SELECT …)` built a temporary
    /// index of the entry's subjects for every entry written (`v10-push-priority-by-join` replaced it).
    private static func firstExpression(row: String) -> String {
        """
        coalesce((SELECT min(p.priority) FROM push_priorities p
            WHERE p.collection = \(row).collection AND p.subject IN (
                SELECT CASE WHEN \(row).collection = 'ticket_messages'
                    THEN (CASE WHEN json_extract(\(row).fields, '$.is_internal') = 'true' THEN 'internal' ELSE 'public' END)
                    ELSE 'create' END
                WHERE \(row).kind = 'create'
                UNION ALL SELECT key FROM json_each(\(row).fields) WHERE \(row).kind = 'update')), 2)
        """
    }
}

/// `v10-push-priority-by-join`: the priority triggers made again with `PushPriorityTable.expression`, which looks each
/// of an entry's subjects up in `push_priorities` by its primary key instead of collecting them first. SQLite built a
/// temporary index (opened, filled and freed) for the old correlated `IN (SELECT …)` on every entry written: about a
/// third of what the class trigger cost an insert. The classes are the same.
enum PushPriorityJoinMigration {
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER outbox_priority_insert;
                DROP TRIGGER outbox_priority_fields;
                CREATE TRIGGER outbox_priority_insert AFTER INSERT ON outbox BEGIN
                    UPDATE outbox SET priority = \(PushPriorityTable.expression(row: "NEW")) WHERE seq = NEW.seq;
                END;
                CREATE TRIGGER outbox_priority_fields AFTER UPDATE OF fields ON outbox BEGIN
                    UPDATE outbox SET priority = \(PushPriorityTable.expression(row: "NEW")) WHERE seq = NEW.seq;
                END;
                """)
    }
}

/// The configured classes in the store (see `PushPriorityMigration`).
public enum PushPriorityTable {
    /// Replaces the configured classes and classes every entry again (in the caller's transaction).
    public static func install(_ rules: [PushPriorityRule], _ db: Database) throws {
        try db.execute(sql: "DELETE FROM push_priorities")
        for rule in rules {
            try db.execute(
                sql: "INSERT INTO push_priorities (collection, subject, priority) VALUES (?, ?, ?)",
                arguments: [rule.collection.name, rule.subject, rule.priority.rawValue])
        }
        try db.execute(sql: "UPDATE outbox SET priority = \(expression(row: "outbox"))")
    }

    /// The class of the entry `row` (a table name or `NEW`): the most urgent of its subjects, normal when none is named.
    /// A create's one subject and each field of an update are looked up by the table's primary key (a join with the
    /// fields' keys, no temporary index). The triggers of `v10-push-priority-by-join` are made with it: changing it
    /// takes a migration that makes them again.
    static func expression(row: String) -> String {
        """
        min(
            coalesce((SELECT p.priority FROM push_priorities p
                WHERE \(row).kind = 'create' AND p.collection = \(row).collection AND p.subject =
                    CASE WHEN \(row).collection = 'ticket_messages'
                    THEN (CASE WHEN json_extract(\(row).fields, '$.is_internal') = 'true' THEN 'internal' ELSE 'public' END)
                    ELSE 'create' END), 2),
            coalesce((SELECT min(p.priority) FROM json_each(\(row).fields) AS f
                JOIN push_priorities p ON p.collection = \(row).collection AND p.subject = f.key
                WHERE \(row).kind = 'update'), 2))
        """
    }
}
