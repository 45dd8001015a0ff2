public import RepairSyncModels

extension RPC {
    /// Tickets from the replica, most recently updated first.
    public enum ListTickets: ControlMethod {
        public typealias Result = [Ticket]
        public static let name = "listTickets"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var status: TicketStatus?
            public var limit: Int?
            public var offset: Int?

            public init(status: TicketStatus? = nil, limit: Int? = nil, offset: Int? = nil) {
                self.status = status
                self.limit = limit
                self.offset = offset
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case status, limit, offset
            }

            public func validate() throws(JSONRPCError) { try Paging.validate(limit: limit, offset: offset) }
        }
    }
}
