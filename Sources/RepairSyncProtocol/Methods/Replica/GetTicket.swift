public import RepairSyncModels

extension RPC {
    /// One ticket with its messages, oldest first; -32001 when it is not in the replica.
    public enum GetTicket: ControlMethod {
        public static let name = "getTicket"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var id: String

            public init(id: String) { self.id = id }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case id
            }
        }

        public struct Result: Codable, Sendable, Hashable {
            public var ticket: Ticket
            public var messages: [TicketMessage]

            public init(ticket: Ticket, messages: [TicketMessage]) {
                self.ticket = ticket
                self.messages = messages
            }
        }
    }
}
