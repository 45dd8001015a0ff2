internal import Foundation
internal import GRDB
internal import RepairSyncModels
internal import RepairSyncStore

/// The read methods of the control socket: what a shop's tools read from the local replica, online or not.
struct ReplicaQueries: Sendable {
    let store: ReplicaStore

    struct Page {
        var limit: Int
        var offset: Int
    }

    func orders(status: String?, clientId: String?, page: Page) throws -> [Order] {
        try store.read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let status { conditions.append("status = ?"); arguments.append(status) }
            if let clientId { conditions.append("client_id = ?"); arguments.append(clientId) }
            return try Order.fetchAll(
                db,
                sql: "SELECT * FROM orders \(Self.whereClause(conditions)) ORDER BY created_at DESC, order_number DESC LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }
    }

    /// An order by id or by its number, with its client and devices.
    func order(id: String?, number: Int?) throws -> (Order, Client?, [Device])? {
        try store.read { db in
            let order: Order?
            if let id {
                order = try Order.fetchOne(db, key: id)
            } else {
                order = try Order.fetchOne(db, sql: "SELECT * FROM orders WHERE order_number = ?", arguments: [number])
            }
            guard let order else { return nil }
            let client = try Client.fetchOne(db, key: order.clientId)
            let devices = try Device.fetchAll(
                db, sql: "SELECT * FROM devices WHERE order_id = ? ORDER BY created_at, id", arguments: [order.id])
            return (order, client, devices)
        }
    }

    func devices(orderId: String?, status: String?, page: Page) throws -> [Device] {
        try store.read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let orderId { conditions.append("order_id = ?"); arguments.append(orderId) }
            if let status { conditions.append("status = ?"); arguments.append(status) }
            return try Device.fetchAll(
                db, sql: "SELECT * FROM devices \(Self.whereClause(conditions)) ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }
    }

    /// Clients whose name, email, phone or company contains `search` (case-insensitive), by last name.
    func clients(search: String?, page: Page) throws -> [Client] {
        try store.read { db in
            var sql = "SELECT * FROM clients"
            var arguments: [any DatabaseValueConvertible] = []
            if let search, !search.isEmpty {
                let pattern = "%" + search.replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
                sql += """
                     WHERE first_name LIKE ? ESCAPE '\\' OR last_name LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\'
                     OR phone LIKE ? ESCAPE '\\' OR company LIKE ? ESCAPE '\\'
                    """
                arguments = Array(repeating: pattern, count: 5)
            }
            sql += " ORDER BY last_name, first_name, id LIMIT ? OFFSET ?"
            return try Client.fetchAll(db, sql: sql, arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }
    }

    func client(id: String) throws -> Client? {
        try store.read { db in try Client.fetchOne(db, key: id) }
    }

    func tickets(status: String?, page: Page) throws -> [Ticket] {
        try store.read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let status { conditions.append("status = ?"); arguments.append(status) }
            return try Ticket.fetchAll(
                db,
                sql: "SELECT * FROM tickets \(Self.whereClause(conditions)) ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }
    }

    /// A ticket with its messages, oldest first.
    func ticket(id: String) throws -> (Ticket, [TicketMessage])? {
        try store.read { db in
            guard let ticket = try Ticket.fetchOne(db, key: id) else { return nil }
            let messages = try TicketMessage.fetchAll(
                db, sql: "SELECT * FROM ticket_messages WHERE ticket_id = ? ORDER BY created_at, id", arguments: [id])
            return (ticket, messages)
        }
    }

    /// The cached dashboard snapshot of a period and when it was fetched (milliseconds since 1970).
    func dashboard(period: String) throws -> (body: String, fetchedAt: Int64)? {
        try store.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT body, fetched_at FROM dashboard_snapshots WHERE period = ?", arguments: [period])
            else { return nil }
            return (row["body"], row["fetched_at"])
        }
    }

    private static func whereClause(_ conditions: [String]) -> String {
        conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    }
}
