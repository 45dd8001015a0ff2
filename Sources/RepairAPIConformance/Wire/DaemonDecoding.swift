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
            return describe(error)
        } catch {
            return "\(error)"
        }
    }

    /// `data[3].total: "12,50" is not a decimal amount` rather than Foundation's paragraph.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
                .trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }
        switch error {
        case .keyNotFound(let key, let context):
            let at = path(context.codingPath)
            return "\(at.isEmpty ? "" : at + ": ")no key \"\(key.stringValue)\""
        case .valueNotFound(_, let context):
            return "\(path(context.codingPath)): null where a value is required"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): not a \(type)"
        case .dataCorrupted(let context):
            let at = path(context.codingPath)
            return "\(at.isEmpty ? "" : at + ": ")\(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
