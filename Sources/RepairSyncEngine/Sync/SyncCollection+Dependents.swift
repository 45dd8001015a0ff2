internal import RepairSyncModels

extension SyncCollection {
    /// This collection and those whose rows go with its rows in the replica (deleting an order deletes its devices,
    /// deleting a ticket its messages, deleting a client the orders booked in here for it and not created yet, with
    /// their devices): what may change size when this one does.
    var withDependents: Set<SyncCollection> {
        switch self {
        case .clients: [.clients, .orders, .devices]
        case .orders: [.orders, .devices]
        case .tickets: [.tickets, .ticketMessages]
        default: [self]
        }
    }
}
