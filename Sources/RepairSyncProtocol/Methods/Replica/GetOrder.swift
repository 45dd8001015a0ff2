public import RepairSyncModels

extension RPC {
    /// One order, by id or by number, with its client and devices. A device's passcode is null unless
    /// `includePasscodes` (the daemon logs who asked).
    public enum GetOrder: ControlMethod {
        public static let name = "getOrder"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var id: String?
            public var orderNumber: Int?
            public var includePasscodes: Bool?

            public init(id: String? = nil, orderNumber: Int? = nil, includePasscodes: Bool? = nil) {
                self.id = id
                self.orderNumber = orderNumber
                self.includePasscodes = includePasscodes
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case id, orderNumber, includePasscodes
            }

            public func validate() throws(JSONRPCError) {
                guard (id == nil) != (orderNumber == nil) else {
                    throw .invalidParams("id", "or orderNumber is required (one of them)")
                }
                if let orderNumber, orderNumber < 0 {
                    throw .invalidParams("orderNumber", "must be an integer in 0...\(Int.max)")
                }
            }
        }

        public struct Result: Codable, Sendable, Hashable {
            public var order: Order
            /// Null when the client is not in the replica.
            public var client: Client?
            public var devices: [Device]

            public init(order: Order, client: Client?, devices: [Device]) {
                self.order = order
                self.client = client
                self.devices = devices
            }

            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(order, forKey: .order)
                try c.encode(client, forKey: .client)
                try c.encode(devices, forKey: .devices)
            }
        }
    }
}
