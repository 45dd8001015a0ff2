internal import GRDB

/// Reads a daemon's store after the daemon has stopped (or was killed): integrity, and each record's version, to
/// compare with the server.
public enum StoreInspector {
    public static let tables = ["clients", "orders", "devices", "tickets", "ticket_messages"]

    /// `PRAGMA integrity_check` ("ok" when sound). Opening runs WAL recovery, as the daemon's next start would.
    public static func integrityCheck(_ path: String) throws -> String {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    /// id → version for each replica table.
    public static func versions(_ path: String) throws -> [String: [String: Int]] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var result: [String: [String: Int]] = [:]
            for table in tables {
                let rows = try Row.fetchAll(db, sql: "SELECT id, version FROM \(table)")
                result[table] = Dictionary(
                    uniqueKeysWithValues: rows.map { ($0["id"] as String, $0["version"] as Int) })
            }
            return result
        }
    }

    /// One column of one table: id → value (as text: an integer column such as `order_number` too).
    public static func column(_ path: String, table: String, column: String) throws -> [String: String?] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, CAST(\(column) AS TEXT) AS value FROM \(table)")
            return Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as String, $0["value"] as String?) })
        }
    }

    /// Writes the store as a shop tool would (its own connection, a short transaction, a busy timeout).
    public static func execute(_ path: String, _ sql: String, _ arguments: [String]) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        try queue.write { db in try db.execute(sql: sql, arguments: StatementArguments(arguments)) }
    }

    /// Rows of a query as text columns.
    public static func strings(_ path: String, _ sql: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchAll(db, sql: sql) }
    }
}

/// A shop tool writing the replica directly (the way `queueChange` expects changes to arrive), on its own connection.
final class ExternalWriter: @unchecked Sendable {
    private let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    func setNotes(_ notes: String, order id: String) throws {
        try queue.write { db in try db.execute(sql: "UPDATE orders SET notes = ? WHERE id = ?", arguments: [notes, id])
        }
    }
}
