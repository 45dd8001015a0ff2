/// A support conversation with a client, optionally about an order.
public struct Ticket: SyncRecord {
    public static let collection = SyncCollection.tickets

    public var id: String
    public var ticketNumber: Int
    public var subject: String
    public var status: TicketStatus
    public var priority: String?
    public var clientId: String?
    public var clientEmail: String
    public var clientName: String?
    public var assignedUserId: String?
    public var assignedUserName: String?
    public var orderId: String?
    public var orderRef: String?
    public var messageCount: Int?
    public var lastMessageAt: Timestamp?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var version: Int

    public init(
        id: String, ticketNumber: Int, subject: String, status: TicketStatus, priority: String? = nil,
        clientId: String? = nil, clientEmail: String, clientName: String? = nil, assignedUserId: String? = nil,
        assignedUserName: String? = nil, orderId: String? = nil, orderRef: String? = nil,
        messageCount: Int? = nil, lastMessageAt: Timestamp? = nil, createdAt: Timestamp, updatedAt: Timestamp,
        version: Int
    ) {
        self.id = id
        self.ticketNumber = ticketNumber
        self.subject = subject
        self.status = status
        self.priority = priority
        self.clientId = clientId
        self.clientEmail = clientEmail
        self.clientName = clientName
        self.assignedUserId = assignedUserId
        self.assignedUserName = assignedUserName
        self.orderId = orderId
        self.orderRef = orderRef
        self.messageCount = messageCount
        self.lastMessageAt = lastMessageAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case ticketNumber = "ticket_number"
        case subject, status, priority
        case clientId = "client_id"
        case clientEmail = "client_email"
        case clientName = "client_name"
        case assignedUserId = "assigned_user_id"
        case assignedUserName = "assigned_user_name"
        case orderId = "order_id"
        case orderRef = "order_ref"
        case messageCount = "message_count"
        case lastMessageAt = "last_message_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case version
    }

    /// Every key must be there, `null` when empty (docs/api.md 2.4): a key left out is refused, not read as a
    /// `null` (`decodeNullable`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        ticketNumber = try c.decode(Int.self, forKey: .ticketNumber)
        subject = try c.decode(String.self, forKey: .subject)
        status = try c.decode(TicketStatus.self, forKey: .status)
        priority = try c.decodeNullable(String.self, forKey: .priority)
        clientId = try c.decodeNullable(String.self, forKey: .clientId)
        clientEmail = try c.decode(String.self, forKey: .clientEmail)
        clientName = try c.decodeNullable(String.self, forKey: .clientName)
        assignedUserId = try c.decodeNullable(String.self, forKey: .assignedUserId)
        assignedUserName = try c.decodeNullable(String.self, forKey: .assignedUserName)
        orderId = try c.decodeNullable(String.self, forKey: .orderId)
        orderRef = try c.decodeNullable(String.self, forKey: .orderRef)
        messageCount = try c.decodeNullable(Int.self, forKey: .messageCount)
        lastMessageAt = try c.decodeNullable(Timestamp.self, forKey: .lastMessageAt)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt)
        updatedAt = try c.decode(Timestamp.self, forKey: .updatedAt)
        version = try c.decode(Int.self, forKey: .version)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(ticketNumber, forKey: .ticketNumber)
        try c.encode(subject, forKey: .subject)
        try c.encode(status, forKey: .status)
        try c.encode(priority, forKey: .priority)
        try c.encode(clientId, forKey: .clientId)
        try c.encode(clientEmail, forKey: .clientEmail)
        try c.encode(clientName, forKey: .clientName)
        try c.encode(assignedUserId, forKey: .assignedUserId)
        try c.encode(assignedUserName, forKey: .assignedUserName)
        try c.encode(orderId, forKey: .orderId)
        try c.encode(orderRef, forKey: .orderRef)
        try c.encode(messageCount, forKey: .messageCount)
        try c.encode(lastMessageAt, forKey: .lastMessageAt)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(version, forKey: .version)
    }
}
