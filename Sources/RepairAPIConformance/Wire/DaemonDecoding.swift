internal import Foundation
internal import RepairSyncModels

/// Decodes bodies exactly as the daemon does — `JSONDecoder` and the wire types of RepairSyncModels — and says why
/// one does not decode. What passes here is what the daemon accepts.
enum DaemonDecoding {
    /// Why `body` is not a changes page of `collection` the daemon can apply, or nil.
    static func pageProblem(_ collection: SyncCollection, _ body: Data) -> String? {
        switch collection {
        case .orders: problem(ChangesPage<Order>.self, body)
        case .devices: problem(ChangesPage<Device>.self, body)
        case .clients: problem(ChangesPage<Client>.self, body)
        case .tickets: problem(ChangesPage<Ticket>.self, body)
        case .ticketMessages: problem(ChangesPage<TicketMessage>.self, body)
        }
    }

    /// Why `body` is not one record of `collection` as the daemon decodes it, or nil.
    static func recordProblem(_ collection: SyncCollection, _ body: Data) -> String? {
        switch collection {
        case .orders: problem(Order.self, body)
        case .devices: problem(Device.self, body)
        case .clients: problem(Client.self, body)
        case .tickets: problem(Ticket.self, body)
        case .ticketMessages: problem(TicketMessage.self, body)
        }
    }

    /// Why `body` is not a 412 body (`error` and `current`) of `collection`, or nil.
    static func conflictProblem(_ collection: SyncCollection, _ body: Data) -> String? {
        switch collection {
        case .orders: problem(VersionConflictBody<Order>.self, body)
        case .devices: problem(VersionConflictBody<Device>.self, body)
        case .clients: problem(VersionConflictBody<Client>.self, body)
        case .tickets: problem(VersionConflictBody<Ticket>.self, body)
        case .ticketMessages: problem(VersionConflictBody<TicketMessage>.self, body)
        }
    }

    static func problem<T: Decodable>(_ type: T.Type, _ body: Data) -> String? {
        do {
            _ = try JSONDecoder().decode(T.self, from: body)
            return nil
        } catch let error as DecodingError {
            return error.summary
        } catch {
            return "\(error)"
        }
    }
}
