internal import Foundation
internal import RepairSyncModels

/// What the development backend needs of a record type to store it: its indexed columns and its write stamp.
protocol StoredRecord: SyncRecord {
    var version: Int { get set }
    var updatedAt: Timestamp { get set }
    var createdAt: Timestamp { get }
    /// The owning record (an order's client, a device's order, a message's ticket), for cascades and the dashboard.
    var parentId: String? { get }
    /// The amount the dashboard sums (an order's total).
    var amount: Money? { get }
}

extension StoredRecord {
    var amount: Money? { nil }
}

extension Order: StoredRecord {
    var parentId: String? { clientId }
    var amount: Money? { total }
}

extension Device: StoredRecord {
    var parentId: String? { orderId }
}

extension Client: StoredRecord {
    var parentId: String? { nil }
}

extension Ticket: StoredRecord {
    var parentId: String? { clientId }
}

extension TicketMessage: StoredRecord {
    var parentId: String? { ticketId }
}

extension SyncCollection {
    /// The record type published in this collection's feed.
    var storedType: any StoredRecord.Type {
        switch self {
        case .orders: Order.self
        case .devices: Device.self
        case .clients: Client.self
        case .tickets: Ticket.self
        case .ticketMessages: TicketMessage.self
        }
    }

    /// Collections whose records are deleted with a record of this one.
    var children: [SyncCollection] {
        switch self {
        case .orders: [.devices]
        case .tickets: [.ticketMessages]
        default: []
        }
    }
}

/// JSON coders configured once: the backend encodes every record the same way, so stored bodies are stable.
enum BackendJSON {
    static func encoder() -> JSONEncoder { JSONEncoder() }
    static func decoder() -> JSONDecoder { JSONDecoder() }
}
