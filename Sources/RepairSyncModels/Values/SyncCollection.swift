/// A collection of records that the backend publishes as a changes feed and the replica mirrors.
public enum SyncCollection: String, CaseIterable, Codable, Sendable, CustomStringConvertible {
    case clients
    case orders
    case devices
    case tickets
    case ticketMessages = "ticket_messages"

    /// The order in which a sync pulls: parents before children (clients → orders → devices, tickets → messages),
    /// so that after a complete pull every child's parent is present.
    public static let pullOrder: [SyncCollection] = [.clients, .orders, .devices, .tickets, .ticketMessages]

    /// The path segment under `/api/v1` and the table name in the replica.
    public var name: String { rawValue }

    public var description: String { rawValue }
}
