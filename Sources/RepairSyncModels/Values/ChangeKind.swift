/// What `queueChange` names: a record another program has already written in the store. Declared once, here, for
/// the engine that queues it, the control protocol that carries it and `repairctl queue`.
public enum ChangeKind: String, Sendable, Hashable, CaseIterable, Codable {
    case orderUpdated = "order-updated"
    case deviceUpdated = "device-updated"
    case ticketMessageCreated = "ticket-message-created"
    /// Another program inserted a client, an order or a device (docs/api.md section 4.7) to be created.
    case clientCreated = "client-created"
    case orderCreated = "order-created"
    case deviceCreated = "device-created"
}
