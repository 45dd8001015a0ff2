extension RPC {
    /// Change an order's status or notes: written and queued in one transaction, durable when the reply arrives.
    /// Answers the outbox change; an unknown status is -32002.
    public enum UpdateOrder: ControlMethod {
        public typealias Result = OutboxChange
        public static let name = "updateOrder"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var id: String
            public var status: FieldChange?
            public var notes: FieldChange?

            public init(id: String, status: FieldChange? = nil, notes: FieldChange? = nil) {
                self.id = id
                self.status = status
                self.notes = notes
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case id, status, notes
            }

            /// The fields to change, by API name (nil: clear).
            public var fields: [String: String?] {
                var fields: [String: String?] = [:]
                if let status { fields["status"] = .some(status.value) }
                if let notes { fields["notes"] = .some(notes.value) }
                return fields
            }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                id = try c.decode(String.self, forKey: .id)
                status = try c.decodeFieldChange(forKey: .status)
                notes = try c.decodeFieldChange(forKey: .notes)
            }

            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encodeFieldChange(status, forKey: .status)
                try c.encodeFieldChange(notes, forKey: .notes)
            }

            public func validate() throws(JSONRPCError) {
                if status == nil, notes == nil { throw .invalidParams("status/notes", "at least one is required") }
            }
        }
    }
}
