internal import Foundation
internal import GRDB
public import RepairSyncModels
internal import RepairSyncStore

/// What a shop's tools read from the local replica, online or not: orders, devices, clients, tickets and the cached
/// dashboard. Reads never wait for the writer (WAL). A device's passcode is sealed in the replica; it is opened
/// only when a read asks for it, and is nil otherwise.
///
/// ```swift
/// let ready = try engine.replica.orders(status: .ready, clientId: nil, page: .init(limit: 50, offset: 0))
/// ```
public struct ReplicaReader: Sendable {
    let store: ReplicaStore
    let cipher: PasscodeCipher?

    public struct Page: Sendable, Hashable {
        public var limit: Int
        public var offset: Int

        public init(limit: Int, offset: Int) {
            self.limit = limit
            self.offset = offset
        }
    }

    /// An order with its client (nil when not in the replica) and its devices, oldest first.
    public struct OrderDetail: Sendable {
        public var order: Order
        public var client: Client?
        public var devices: [Device]
    }

    /// A ticket with its messages, oldest first.
    public struct TicketThread: Sendable {
        public var ticket: Ticket
        public var messages: [TicketMessage]
    }

    /// The dashboard figures of a period as the last full sync fetched them.
    public struct DashboardSnapshot: Sendable {
        public var stats: DashboardStats
        public var fetchedAt: Timestamp
    }

    /// Orders, newest first.
    public func orders(status: OrderStatus?, clientId: String?, page: Page) throws -> [Order] {
        try store.read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let status {
                conditions.append("status = ?")
                arguments.append(status.rawValue)
            }
            if let clientId {
                conditions.append("client_id = ?")
                arguments.append(clientId)
            }
            return try Order.fetchAll(
                db,
                sql:
                    "SELECT * FROM orders \(Self.whereClause(conditions)) ORDER BY created_at DESC, order_number DESC LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }
    }

    /// An order by id or by its number, with its client and devices.
    public func order(id: String?, number: Int?, revealPasscodes: Bool) throws -> OrderDetail? {
        let found = try store.read { db -> OrderDetail? in
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
            return OrderDetail(order: order, client: client, devices: devices)
        }
        return found.map { detail in
            var detail = detail
            detail.devices = detail.devices.map { passcode($0, reveal: revealPasscodes) }
            return detail
        }
    }

    /// Devices, newest first.
    public func devices(orderId: String?, status: DeviceStatus?, page: Page, revealPasscodes: Bool) throws -> [Device] {
        try store.read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let orderId {
                conditions.append("order_id = ?")
                arguments.append(orderId)
            }
            if let status {
                conditions.append("status = ?")
                arguments.append(status.rawValue)
            }
            return try Device.fetchAll(
                db,
                sql:
                    "SELECT * FROM devices \(Self.whereClause(conditions)) ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }.map { passcode($0, reveal: revealPasscodes) }
    }

    /// Clients whose name, email, phone or company contains `search` (case-insensitive), by last name.
    public func clients(search: String?, page: Page) throws -> [Client] {
        try store.read { db in
            var sql = "SELECT * FROM clients"
            var arguments: [any DatabaseValueConvertible] = []
            if let search, !search.isEmpty {
                let pattern =
                    "%"
                    + search.replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
                sql += """
                     WHERE first_name LIKE ? ESCAPE '\\' OR last_name LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\'
                     OR phone LIKE ? ESCAPE '\\' OR company LIKE ? ESCAPE '\\'
                    """
                arguments = Array(repeating: pattern, count: 5)
            }
            sql += " ORDER BY last_name, first_name, id LIMIT ? OFFSET ?"
            return try Client.fetchAll(
                db, sql: sql, arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }
    }

    public func client(id: String) throws -> Client? {
        try store.read { db in try Client.fetchOne(db, key: id) }
    }

    /// Tickets, most recently updated first.
    public func tickets(status: TicketStatus?, page: Page) throws -> [Ticket] {
        try store.read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let status {
                conditions.append("status = ?")
                arguments.append(status.rawValue)
            }
            return try Ticket.fetchAll(
                db,
                sql:
                    "SELECT * FROM tickets \(Self.whereClause(conditions)) ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
                arguments: StatementArguments(arguments + [page.limit, page.offset]))
        }
    }

    /// A ticket with its messages, oldest first.
    public func ticket(id: String) throws -> TicketThread? {
        try store.read { db in
            guard let ticket = try Ticket.fetchOne(db, key: id) else { return nil }
            let messages = try TicketMessage.fetchAll(
                db, sql: "SELECT * FROM ticket_messages WHERE ticket_id = ? ORDER BY created_at, id", arguments: [id])
            return TicketThread(ticket: ticket, messages: messages)
        }
    }

    /// The cached dashboard snapshot of a period (`today`, `week`, `month`); nil before the first full sync.
    public func dashboard(period: String) throws -> DashboardSnapshot? {
        let row = try store.read { db in
            try Row.fetchOne(
                db, sql: "SELECT body, fetched_at FROM dashboard_snapshots WHERE period = ?", arguments: [period]
            )
            .map { (body: $0["body"] as String, fetchedAt: $0["fetched_at"] as Int64) }
        }
        guard let row else { return nil }
        // The engine decoded this body before storing it; a body that no longer decodes is a store problem.
        guard let stats = try? JSONDecoder().decode(DashboardStats.self, from: Data(row.body.utf8)) else {
            throw StoreFailure.unreadable("the dashboard snapshot of \(period) does not decode")
        }
        return DashboardSnapshot(stats: stats, fetchedAt: Timestamp(millisecondsSince1970: row.fetchedAt))
    }

    /// Passcodes are sealed in the replica; they leave it, opened, only when asked for explicitly.
    func passcode(_ device: Device, reveal: Bool) -> Device {
        var device = device
        device.passcode = reveal ? cipher?.open(device.passcode) : nil
        return device
    }

    private static func whereClause(_ conditions: [String]) -> String {
        conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    }
}

extension SyncEngine {
    /// The replica's read side, for the control socket and other readers.
    public nonisolated var replica: ReplicaReader { ReplicaReader(store: store, cipher: configuration.passcodeCipher) }
}
