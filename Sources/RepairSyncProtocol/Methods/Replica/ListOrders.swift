public import RepairSyncModels

extension RPC {
    /// Orders from the replica, newest first (works offline).
    public enum ListOrders: ControlMethod {
        public typealias Result = [Order]
        public static let name = "listOrders"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var status: OrderStatus?
            public var clientId: String?
            /// 1…1000, default 100.
            public var limit: Int?
            public var offset: Int?

            public init(status: OrderStatus? = nil, clientId: String? = nil, limit: Int? = nil, offset: Int? = nil) {
                self.status = status
                self.clientId = clientId
                self.limit = limit
                self.offset = offset
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case status, clientId, limit, offset
            }

            public func validate() throws(JSONRPCError) { try Paging.validate(limit: limit, offset: offset) }
        }
    }
}
