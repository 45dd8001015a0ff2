public import RepairSyncModels

extension RPC {
    /// Book a device in on an order of the replica (from the server, or booked in here): in the replica at once,
    /// its creation queued in the same transaction, pushed after its order's. Answers the device (`passcode` null,
    /// as in every read). With the caller's `id` a repeated call answers the device already written.
    public enum CreateDevice: ControlMethod {
        public typealias Result = Device
        public static let name = "createDevice"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var orderId: String
            public var device: NewDevice

            public init(orderId: String, device: NewDevice) {
                self.orderId = orderId
                self.device = device
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case orderId, type, brand, model, serial, imei, passcode, status, issue, diagnosis, resolution, price
                case assignedUserId, id
            }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                orderId = try c.decode(String.self, forKey: .orderId)
                device = try NewDevice(from: decoder)
            }

            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(orderId, forKey: .orderId)
                try device.encode(to: encoder)
            }

            /// The fields by their API names, `order_id` included.
            public var fields: [String: String?] { device.fields.merging(["order_id": orderId]) { $1 } }
        }
    }

    /// A device to book in: `createDevice`'s params without `orderId`, and an item of `createOrder`'s `devices`.
    public struct NewDevice: Codable, Sendable, Hashable {
        public var type: String
        public var brand: String?
        public var model: String?
        public var serial: String?
        public var imei: String?
        /// Sealed in the replica with the daemon's passcode key (refused when none is configured).
        public var passcode: String?
        /// Default `booked_in`.
        public var status: String?
        public var issue: String?
        public var diagnosis: String?
        public var resolution: String?
        /// Money: decimal text or a number.
        public var price: String?
        public var assignedUserId: String?
        /// The device's id (a lowercase UUID); the daemon makes one when absent.
        public var id: String?

        public init(
            type: String, brand: String? = nil, model: String? = nil, serial: String? = nil, imei: String? = nil,
            passcode: String? = nil, status: String? = nil, issue: String? = nil, diagnosis: String? = nil,
            resolution: String? = nil, price: String? = nil, assignedUserId: String? = nil, id: String? = nil
        ) {
            self.type = type
            self.brand = brand
            self.model = model
            self.serial = serial
            self.imei = imei
            self.passcode = passcode
            self.status = status
            self.issue = issue
            self.diagnosis = diagnosis
            self.resolution = resolution
            self.price = price
            self.assignedUserId = assignedUserId
            self.id = id
        }

        public enum CodingKeys: String, CodingKey, CaseIterable {
            case type, brand, model, serial, imei, passcode, status, issue, diagnosis, resolution, price
            case assignedUserId, id
        }

        public init(from decoder: any Decoder) throws {
            // An item of createOrder's `devices`: a name it does not take is refused, naming its place
            // (`devices[1].orderId`: a device of a new order takes the order's id). At the top of createDevice's
            // params the method's own names are checked before this.
            if !decoder.codingPath.isEmpty, case .object(let members) = try JSONValue(from: decoder),
                let unknown = members.first(where: { member in
                    !CodingKeys.allCases.contains { $0.stringValue == member.key }
                })
            {
                let known = CodingKeys.allCases.map(\.stringValue).sorted().joined(separator: ", ")
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: decoder.codingPath + [AnyKey(unknown.key)],
                        debugDescription: "is not a field of a new device (known: \(known))"))
            }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            type = try c.decode(String.self, forKey: .type)
            brand = try c.decodeIfPresent(String.self, forKey: .brand)
            model = try c.decodeIfPresent(String.self, forKey: .model)
            serial = try c.decodeIfPresent(String.self, forKey: .serial)
            imei = try c.decodeIfPresent(String.self, forKey: .imei)
            passcode = try c.decodeIfPresent(String.self, forKey: .passcode)
            status = try c.decodeIfPresent(String.self, forKey: .status)
            issue = try c.decodeIfPresent(String.self, forKey: .issue)
            diagnosis = try c.decodeIfPresent(String.self, forKey: .diagnosis)
            resolution = try c.decodeIfPresent(String.self, forKey: .resolution)
            price = try c.decodeAmount(forKey: .price)
            assignedUserId = try c.decodeIfPresent(String.self, forKey: .assignedUserId)
            id = try c.decodeIfPresent(String.self, forKey: .id)
        }

        /// The fields by their API names (docs/api.md section 4.7), those given only.
        public var fields: [String: String?] {
            let named: [(String, String?)] = [
                ("type", type), ("brand", brand), ("model", model), ("serial", serial), ("imei", imei),
                ("passcode", passcode), ("status", status), ("issue", issue), ("diagnosis", diagnosis),
                ("resolution", resolution), ("price", price), ("assigned_user_id", assignedUserId),
            ]
            return Dictionary(uniqueKeysWithValues: named.compactMap { name, value in value.map { (name, .some($0)) } })
        }
    }
}
