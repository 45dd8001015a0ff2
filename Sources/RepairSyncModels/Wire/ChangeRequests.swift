/// `PATCH /api/v1/orders/{id}`: any subset of the fields a shop may change on an order.
public struct OrderPatch: Codable, Hashable, Sendable {
    public var status: OrderStatus?
    public var notes: FieldValue<String>?

    public init(status: OrderStatus? = nil, notes: FieldValue<String>? = nil) {
        self.status = status
        self.notes = notes
    }

    public var isEmpty: Bool { status == nil && notes == nil }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case status, notes
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        status = try c.decodeIfPresent(OrderStatus.self, forKey: .status)
        notes = try FieldValue.decode(from: c, forKey: .notes)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(status, forKey: .status)
        try notes?.encode(to: &c, forKey: .notes)
    }
}

/// `PATCH /api/v1/devices/{id}`: any subset of status, diagnosis and resolution.
public struct DevicePatch: Codable, Hashable, Sendable {
    public var status: DeviceStatus?
    public var diagnosis: FieldValue<String>?
    public var resolution: FieldValue<String>?

    public init(
        status: DeviceStatus? = nil, diagnosis: FieldValue<String>? = nil, resolution: FieldValue<String>? = nil
    ) {
        self.status = status
        self.diagnosis = diagnosis
        self.resolution = resolution
    }

    public var isEmpty: Bool { status == nil && diagnosis == nil && resolution == nil }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case status, diagnosis, resolution
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        status = try c.decodeIfPresent(DeviceStatus.self, forKey: .status)
        diagnosis = try FieldValue.decode(from: c, forKey: .diagnosis)
        resolution = try FieldValue.decode(from: c, forKey: .resolution)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(status, forKey: .status)
        try diagnosis?.encode(to: &c, forKey: .diagnosis)
        try resolution?.encode(to: &c, forKey: .resolution)
    }
}

/// A field in a PATCH body that is present: either set to a value or cleared with an explicit `null`.
/// (A field absent from the body is `nil` in the patch and left unchanged.)
public enum FieldValue<Value: Codable & Hashable & Sendable>: Hashable, Sendable {
    case set(Value)
    case cleared

    public var value: Value? {
        if case .set(let value) = self { return value }
        return nil
    }

    public init(_ value: Value?) {
        self = value.map(FieldValue.set) ?? .cleared
    }

    static func decode<Key: CodingKey>(from c: KeyedDecodingContainer<Key>, forKey key: Key) throws -> FieldValue? {
        guard c.contains(key) else { return nil }
        if try c.decodeNil(forKey: key) { return .cleared }
        return .set(try c.decode(Value.self, forKey: key))
    }

    func encode<Key: CodingKey>(to c: inout KeyedEncodingContainer<Key>, forKey key: Key) throws {
        switch self {
        case .set(let value): try c.encode(value, forKey: key)
        case .cleared: try c.encodeNil(forKey: key)
        }
    }
}

extension FieldValue: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        self = c.decodeNil() ? .cleared : .set(try c.decode(Value.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .set(let value): try c.encode(value)
        case .cleared: try c.encodeNil()
        }
    }
}

/// `POST /api/v1/tickets/{id}/messages`: a reply with a client-generated id (a UUID), so that a retried request
/// can never create a second message.
public struct NewTicketMessage: Codable, Hashable, Sendable {
    public var id: String
    public var content: String
    public var isInternal: Bool

    public init(id: String, content: String, isInternal: Bool) {
        self.id = id
        self.content = content
        self.isInternal = isInternal
    }

    public enum CodingKeys: String, CodingKey {
        case id, content
        case isInternal = "is_internal"
    }
}
