/// A device booked in on an order.
///
/// `passcode` is sensitive: tools show it only when asked explicitly.
public struct Device: SyncRecord {
    public static let collection = SyncCollection.devices

    public var id: String
    public var orderId: String
    public var type: String
    public var brand: String?
    public var model: String?
    public var serial: String?
    public var imei: String?
    public var passcode: String?
    public var status: DeviceStatus
    public var issue: String?
    public var diagnosis: String?
    public var resolution: String?
    public var price: Money?
    public var assignedUserId: String?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var version: Int

    public init(
        id: String, orderId: String, type: String, brand: String? = nil, model: String? = nil,
        serial: String? = nil, imei: String? = nil, passcode: String? = nil, status: DeviceStatus,
        issue: String? = nil, diagnosis: String? = nil, resolution: String? = nil, price: Money? = nil,
        assignedUserId: String? = nil, createdAt: Timestamp, updatedAt: Timestamp, version: Int
    ) {
        self.id = id
        self.orderId = orderId
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
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case orderId = "order_id"
        case type, brand, model, serial, imei, passcode, status, issue, diagnosis, resolution, price
        case assignedUserId = "assigned_user_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case version
    }

    /// Every key must be there, `null` when empty (docs/api.md 2.4): a key left out is refused, not read as a
    /// `null` (`decodeNullable`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        orderId = try c.decode(String.self, forKey: .orderId)
        type = try c.decode(String.self, forKey: .type)
        brand = try c.decodeNullable(String.self, forKey: .brand)
        model = try c.decodeNullable(String.self, forKey: .model)
        serial = try c.decodeNullable(String.self, forKey: .serial)
        imei = try c.decodeNullable(String.self, forKey: .imei)
        passcode = try c.decodeNullable(String.self, forKey: .passcode)
        status = try c.decode(DeviceStatus.self, forKey: .status)
        issue = try c.decodeNullable(String.self, forKey: .issue)
        diagnosis = try c.decodeNullable(String.self, forKey: .diagnosis)
        resolution = try c.decodeNullable(String.self, forKey: .resolution)
        price = try c.decodeNullable(Money.self, forKey: .price)
        assignedUserId = try c.decodeNullable(String.self, forKey: .assignedUserId)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt)
        updatedAt = try c.decode(Timestamp.self, forKey: .updatedAt)
        version = try c.decode(Int.self, forKey: .version)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(orderId, forKey: .orderId)
        try c.encode(type, forKey: .type)
        try c.encode(brand, forKey: .brand)
        try c.encode(model, forKey: .model)
        try c.encode(serial, forKey: .serial)
        try c.encode(imei, forKey: .imei)
        try c.encode(passcode, forKey: .passcode)
        try c.encode(status, forKey: .status)
        try c.encode(issue, forKey: .issue)
        try c.encode(diagnosis, forKey: .diagnosis)
        try c.encode(resolution, forKey: .resolution)
        try c.encode(price, forKey: .price)
        try c.encode(assignedUserId, forKey: .assignedUserId)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(version, forKey: .version)
    }

    /// "Apple iPhone 13", or the brand or model alone, or the device type when neither is known.
    public var displayName: String {
        let parts = [brand, model].compactMap { $0?.trimmed }.filter { !$0.isEmpty }
        return parts.isEmpty ? type : parts.joined(separator: " ")
    }
}

extension String {
    var trimmed: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
