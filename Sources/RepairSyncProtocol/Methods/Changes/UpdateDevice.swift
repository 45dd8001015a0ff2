extension RPC {
    /// Change a device's status, diagnosis or resolution: written and queued in one transaction. Answers the outbox
    /// change; an unknown status is -32002.
    public enum UpdateDevice: ControlMethod {
        public typealias Result = OutboxChange
        public static let name = "updateDevice"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var id: String
            public var status: FieldChange?
            public var diagnosis: FieldChange?
            public var resolution: FieldChange?

            public init(
                id: String, status: FieldChange? = nil, diagnosis: FieldChange? = nil, resolution: FieldChange? = nil
            ) {
                self.id = id
                self.status = status
                self.diagnosis = diagnosis
                self.resolution = resolution
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case id, status, diagnosis, resolution
            }

            /// The fields to change, by API name (nil: clear).
            public var fields: [String: String?] {
                var fields: [String: String?] = [:]
                if let status { fields["status"] = .some(status.value) }
                if let diagnosis { fields["diagnosis"] = .some(diagnosis.value) }
                if let resolution { fields["resolution"] = .some(resolution.value) }
                return fields
            }

            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                id = try c.decode(String.self, forKey: .id)
                status = try c.decodeFieldChange(forKey: .status)
                diagnosis = try c.decodeFieldChange(forKey: .diagnosis)
                resolution = try c.decodeFieldChange(forKey: .resolution)
            }

            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encodeFieldChange(status, forKey: .status)
                try c.encodeFieldChange(diagnosis, forKey: .diagnosis)
                try c.encodeFieldChange(resolution, forKey: .resolution)
            }

            public func validate() throws(JSONRPCError) {
                if status == nil, diagnosis == nil, resolution == nil {
                    throw .invalidParams("status/diagnosis/resolution", "at least one is required")
                }
            }
        }
    }
}
