public import RepairSyncModels

extension RPC {
    /// Clients whose name, email, phone or company contains `search` (any case), by last name.
    public enum ListClients: ControlMethod {
        public typealias Result = [Client]
        public static let name = "listClients"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var search: String?
            public var limit: Int?
            public var offset: Int?

            public init(search: String? = nil, limit: Int? = nil, offset: Int? = nil) {
                self.search = search
                self.limit = limit
                self.offset = offset
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case search, limit, offset
            }

            public func validate() throws(JSONRPCError) { try Paging.validate(limit: limit, offset: offset) }
        }
    }
}
