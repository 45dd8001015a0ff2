/// A repair order: what a customer brought in, its status and its money.
///
/// `clientName`, `clientEmail`, `clientPhone`, `locationName`, `assignedUserName` and `deviceCount` are the
/// server's denormalised view at the time of the last write, so an order list needs no join.
///
/// `orderNumber` is nil for an order booked in here that the server has not created yet: the server assigns the
/// number when it creates the order, so a local guess could collide with a real one (`displayRef` is `#pending`).
public struct Order: SyncRecord {
    public static let collection = SyncCollection.orders

    public var id: String
    /// Assigned by the server; nil until the server has created an order booked in here.
    public var orderNumber: Int?
    public var status: OrderStatus
    public var total: Money?
    public var deposit: Money?
    public var balance: Money?
    public var notes: String?
    public var clientId: String
    public var clientName: String?
    public var clientEmail: String?
    public var clientPhone: String?
    public var locationId: String?
    public var locationName: String?
    public var assignedUserId: String?
    public var assignedUserName: String?
    public var deviceCount: Int?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var version: Int

    public init(
        id: String, orderNumber: Int?, status: OrderStatus, total: Money? = nil, deposit: Money? = nil,
        balance: Money? = nil, notes: String? = nil, clientId: String, clientName: String? = nil,
        clientEmail: String? = nil, clientPhone: String? = nil, locationId: String? = nil,
        locationName: String? = nil, assignedUserId: String? = nil, assignedUserName: String? = nil,
        deviceCount: Int? = nil, createdAt: Timestamp, updatedAt: Timestamp, version: Int
    ) {
        self.id = id
        self.orderNumber = orderNumber
        self.status = status
        self.total = total
        self.deposit = deposit
        self.balance = balance
        self.notes = notes
        self.clientId = clientId
        self.clientName = clientName
        self.clientEmail = clientEmail
        self.clientPhone = clientPhone
        self.locationId = locationId
        self.locationName = locationName
        self.assignedUserId = assignedUserId
        self.assignedUserName = assignedUserName
        self.deviceCount = deviceCount
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case orderNumber = "order_number"
        case status, total, deposit, balance, notes
        case clientId = "client_id"
        case clientName = "client_name"
        case clientEmail = "client_email"
        case clientPhone = "client_phone"
        case locationId = "location_id"
        case locationName = "location_name"
        case assignedUserId = "assigned_user_id"
        case assignedUserName = "assigned_user_name"
        case deviceCount = "device_count"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case version
    }

    /// Every key must be there, `null` when empty (docs/api.md 2.4): a key left out is refused, not read as a
    /// `null` (`decodeNullable`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        orderNumber = try c.decodeNullable(Int.self, forKey: .orderNumber)
        status = try c.decode(OrderStatus.self, forKey: .status)
        total = try c.decodeNullable(Money.self, forKey: .total)
        deposit = try c.decodeNullable(Money.self, forKey: .deposit)
        balance = try c.decodeNullable(Money.self, forKey: .balance)
        notes = try c.decodeNullable(String.self, forKey: .notes)
        clientId = try c.decode(String.self, forKey: .clientId)
        clientName = try c.decodeNullable(String.self, forKey: .clientName)
        clientEmail = try c.decodeNullable(String.self, forKey: .clientEmail)
        clientPhone = try c.decodeNullable(String.self, forKey: .clientPhone)
        locationId = try c.decodeNullable(String.self, forKey: .locationId)
        locationName = try c.decodeNullable(String.self, forKey: .locationName)
        assignedUserId = try c.decodeNullable(String.self, forKey: .assignedUserId)
        assignedUserName = try c.decodeNullable(String.self, forKey: .assignedUserName)
        deviceCount = try c.decodeNullable(Int.self, forKey: .deviceCount)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt)
        updatedAt = try c.decode(Timestamp.self, forKey: .updatedAt)
        version = try c.decode(Int.self, forKey: .version)
    }

    // Written by hand so that absent values are sent as explicit `null`s: a reader never has to guess whether a
    // missing key means "unchanged" or "cleared".
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(orderNumber, forKey: .orderNumber)
        try c.encode(status, forKey: .status)
        try c.encode(total, forKey: .total)
        try c.encode(deposit, forKey: .deposit)
        try c.encode(balance, forKey: .balance)
        try c.encode(notes, forKey: .notes)
        try c.encode(clientId, forKey: .clientId)
        try c.encode(clientName, forKey: .clientName)
        try c.encode(clientEmail, forKey: .clientEmail)
        try c.encode(clientPhone, forKey: .clientPhone)
        try c.encode(locationId, forKey: .locationId)
        try c.encode(locationName, forKey: .locationName)
        try c.encode(assignedUserId, forKey: .assignedUserId)
        try c.encode(assignedUserName, forKey: .assignedUserName)
        try c.encode(deviceCount, forKey: .deviceCount)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(version, forKey: .version)
    }

    /// `#1042`: how people refer to an order; `#pending` until the server has assigned its number.
    public var displayRef: String { orderNumber.map { "#\($0)" } ?? Self.pendingRef }

    /// What an order the server has not numbered yet shows instead of a number.
    public static let pendingRef = "#pending"

    /// Paid when nothing is left to pay: the balance is zero or negative (a refund is owed). An order with no
    /// balance recorded is not paid.
    public var isPaid: Bool {
        guard let balance else { return false }
        return balance <= .zero
    }
}
