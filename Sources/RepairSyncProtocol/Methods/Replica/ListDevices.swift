public import RepairSyncModels

extension RPC {
    /// Devices from the replica, newest first; passcodes only with `includePasscodes` (logged).
    public enum ListDevices: ControlMethod {
        public typealias Result = [Device]
        public static let name = "listDevices"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var orderId: String?
            public var status: DeviceStatus?
            public var limit: Int?
            public var offset: Int?
            public var includePasscodes: Bool?

            public init(
                orderId: String? = nil, status: DeviceStatus? = nil, limit: Int? = nil, offset: Int? = nil,
                includePasscodes: Bool? = nil
            ) {
                self.orderId = orderId
                self.status = status
                self.limit = limit
                self.offset = offset
                self.includePasscodes = includePasscodes
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case orderId, status, limit, offset, includePasscodes
            }

            public func validate() throws(JSONRPCError) { try Paging.validate(limit: limit, offset: offset) }
        }
    }
}
