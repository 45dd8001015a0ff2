extension RPC {
    /// Book an order in for a client of the replica (from the server, or booked in here), with its devices if
    /// given, all in one transaction (durable when the reply arrives). The order has no number until the server
    /// has created it (`order_number` null; `repairctl` shows `#pending`). Answers the order as `getOrder` does.
    public enum CreateOrder: ControlMethod {
        public typealias Result = GetOrder.Result
        public static let name = "createOrder"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var clientId: String
            /// Default `booked_in`.
            public var status: String?
            public var notes: String?
            /// Money: decimal text or a number.
            public var deposit: String?
            public var locationId: String?
            public var assignedUserId: String?
            /// The order's devices, booked in with it.
            public var devices: [NewDevice]?
            /// The order's id (a lowercase UUID); the daemon makes one when absent.
            public var id: String?

            public init(
                clientId: String, status: String? = nil, notes: String? = nil, deposit: String? = nil,
                locationId: String? = nil, assignedUserId: String? = nil, devices: [NewDevice]? = nil, id: String? = nil
            ) {
                self.clientId = clientId
                self.status = status
                self.notes = notes
                self.deposit = deposit
                self.locationId = locationId
                self.assignedUserId = assignedUserId
                self.devices = devices
                self.id = id
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case clientId, status, notes, deposit, locationId, assignedUserId, devices, id
            }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                clientId = try c.decode(String.self, forKey: .clientId)
                status = try c.decodeIfPresent(String.self, forKey: .status)
                notes = try c.decodeIfPresent(String.self, forKey: .notes)
                deposit = try c.decodeAmount(forKey: .deposit)
                locationId = try c.decodeIfPresent(String.self, forKey: .locationId)
                assignedUserId = try c.decodeIfPresent(String.self, forKey: .assignedUserId)
                devices = try c.decodeIfPresent([NewDevice].self, forKey: .devices)
                id = try c.decodeIfPresent(String.self, forKey: .id)
            }

            /// The order's fields by their API names (docs/api.md section 4.7), those given only.
            public var fields: [String: String?] {
                let named: [(String, String?)] = [
                    ("client_id", clientId), ("status", status), ("notes", notes), ("deposit", deposit),
                    ("location_id", locationId), ("assigned_user_id", assignedUserId),
                ]
                return Dictionary(
                    uniqueKeysWithValues: named.compactMap { name, value in value.map { (name, .some($0)) } })
            }
        }
    }
}
