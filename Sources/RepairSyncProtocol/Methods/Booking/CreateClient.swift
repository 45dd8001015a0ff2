public import RepairSyncModels

extension RPC {
    /// Book a client in, online or not: the client is in the replica at once and its creation is queued in the same
    /// transaction (durable when the reply arrives); the daemon pushes it with `POST /api/v1/clients`. With the
    /// caller's `id` a repeated call answers the client already written; the same id with other values is -32002.
    public enum CreateClient: ControlMethod {
        public typealias Result = Client
        public static let name = "createClient"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var email: String
            public var firstName: String?
            public var lastName: String?
            public var phone: String?
            public var company: String?
            public var address: String?
            public var city: String?
            public var postcode: String?
            public var notes: String?
            /// The client's id (8-4-4-4-12 hexadecimal digits); the daemon makes one when absent.
            public var id: String?

            public init(
                email: String, firstName: String? = nil, lastName: String? = nil, phone: String? = nil,
                company: String? = nil, address: String? = nil, city: String? = nil, postcode: String? = nil,
                notes: String? = nil, id: String? = nil
            ) {
                self.email = email
                self.firstName = firstName
                self.lastName = lastName
                self.phone = phone
                self.company = company
                self.address = address
                self.city = city
                self.postcode = postcode
                self.notes = notes
                self.id = id
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case email, firstName, lastName, phone, company, address, city, postcode, notes, id
            }

            /// The fields by their API names (docs/api.md section 4.7), those given only.
            public var fields: [String: String?] {
                let named: [(String, String?)] = [
                    ("email", email), ("first_name", firstName), ("last_name", lastName), ("phone", phone),
                    ("company", company), ("address", address), ("city", city), ("postcode", postcode),
                    ("notes", notes),
                ]
                return Dictionary(
                    uniqueKeysWithValues: named.compactMap { name, value in value.map { (name, .some($0)) } })
            }
        }
    }
}
