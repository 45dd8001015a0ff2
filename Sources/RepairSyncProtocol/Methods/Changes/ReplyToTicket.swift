public import RepairSyncModels

extension RPC {
    /// Write a new message on a ticket and queue it. `id`, a lowercase UUID the caller chooses, makes the call safe to
    /// repeat: the same id with the same content answers the message already written; with other content it is
    /// -32002.
    public enum ReplyToTicket: ControlMethod {
        public typealias Result = TicketMessage
        public static let name = "replyToTicket"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var ticketId: String
            public var content: String
            /// A note for staff only (default false).
            public var `internal`: Bool?
            /// The message's id (8-4-4-4-12 hexadecimal digits); the daemon makes one when absent.
            public var id: String?

            public init(ticketId: String, content: String, internal: Bool? = nil, id: String? = nil) {
                self.ticketId = ticketId
                self.content = content
                self.internal = `internal`
                self.id = id
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case ticketId, content, `internal`, id
            }
        }
    }
}
