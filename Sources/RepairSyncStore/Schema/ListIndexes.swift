public import GRDB

/// The indexes that only the control socket's lists read (migration `v5-list-indexes-and-outbox-counts`): the newest
/// orders (all, by status, by client), devices (all, by status), tickets (all, by status) and clients by name.
/// Nothing a pull runs reads them.
///
/// The first pull of a collection into an empty table loads it in bulk: it drops the table's list indexes, and
/// builds them again when the pull ends, however it ends (`create`: one sort of the table). Records arrive in feed
/// order, which is random against these keys, so keeping the indexes would make every page's commit rewrite a page of
/// each index for nearly every record (the initial sync of 550,000 records wrote about 3 GB for a 217 MB store;
/// docs/performance.md). A load a crash interrupted is finished by the next pull of the collection, which builds
/// whatever is missing; until then the lists walk the table, which is still filling.
///
/// The definitions are the migration's, and a test holds them to the schema a migrated store has.
public enum ListIndexes {
    public struct Definition: Sendable, Hashable {
        public let table: String
        public let name: String
        public let sql: String
    }

    public static let all: [Definition] = [
        .init(
            table: "orders", name: "orders_created",
            sql: "CREATE INDEX orders_created ON orders(created_at DESC, order_number DESC)"),
        .init(
            table: "orders", name: "orders_status_created",
            sql: "CREATE INDEX orders_status_created ON orders(status, created_at DESC, order_number DESC)"),
        .init(
            table: "orders", name: "orders_client_created",
            sql: "CREATE INDEX orders_client_created ON orders(client_id, created_at DESC, order_number DESC)"),
        .init(
            table: "devices", name: "devices_created",
            sql: "CREATE INDEX devices_created ON devices(created_at DESC, id)"),
        .init(
            table: "devices", name: "devices_status_created",
            sql: "CREATE INDEX devices_status_created ON devices(status, created_at DESC, id)"),
        .init(
            table: "tickets", name: "tickets_updated",
            sql: "CREATE INDEX tickets_updated ON tickets(updated_at DESC, id)"),
        .init(
            table: "tickets", name: "tickets_status_updated",
            sql: "CREATE INDEX tickets_status_updated ON tickets(status, updated_at DESC, id)"),
        .init(
            table: "clients", name: "clients_name",
            sql: "CREATE INDEX clients_name ON clients(last_name, first_name, id)"),
    ]

    /// The list indexes of `table`.
    public static func of(_ table: String) -> [Definition] { all.filter { $0.table == table } }

    /// Those of `table`'s list indexes the store does not have.
    public static func missing(on table: String, _ db: Database) throws -> [Definition] {
        let present = Set(
            try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", arguments: [table]))
        return of(table).filter { !present.contains($0.name) }
    }

    /// Drops `table`'s list indexes, for a load in bulk. Returns whether the table was empty and they were dropped:
    /// a table with rows keeps them (a resync of a full table updates records in place).
    public static func dropForBulkLoad(on table: String, _ db: Database) throws -> Bool {
        guard !of(table).isEmpty, try Int.fetchOne(db, sql: "SELECT 1 FROM \(table) LIMIT 1") == nil else {
            return false
        }
        for index in of(table) { try db.execute(sql: "DROP INDEX IF EXISTS \(index.name)") }
        return true
    }

    /// Builds `table`'s missing list indexes; returns their names.
    @discardableResult
    public static func create(on table: String, _ db: Database) throws -> [String] {
        let missing = try missing(on: table, db)
        for index in missing { try db.execute(sql: index.sql) }
        return missing.map(\.name)
    }
}
