/// One message in a ticket's thread. Messages are created, never edited, so they never conflict: the replica holds
/// the union of what the server has and what was written here.
public struct TicketMessage: SyncRecord {
    public static let collection = SyncCollection.ticketMessages

    public var id: String
    public var ticketId: String
    public var content: String
    public var senderType: SenderType
    public var senderName: String?
    public var senderId: String?
    public var isInternal: Bool
    public var createdAt: Timestamp
    public var updatedAt: Timestamp
    public var version: Int

    public init(
        id: String, ticketId: String, content: String, senderType: SenderType, senderName: String? = nil,
        senderId: String? = nil, isInternal: Bool = false, createdAt: Timestamp, updatedAt: Timestamp,
        version: Int
    ) {
        self.id = id
        self.ticketId = ticketId
        self.content = content
        self.senderType = senderType
        self.senderName = senderName
        self.senderId = senderId
        self.isInternal = isInternal
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case ticketId = "ticket_id"
        case content
        case senderType = "sender_type"
        case senderName = "sender_name"
        case senderId = "sender_id"
        case isInternal = "is_internal"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case version
    }

    /// Every key must be there, `null` when empty (docs/api.md 2.4): a key left out is refused, not read as a
    /// `null` (`decodeNullable`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        ticketId = try c.decode(String.self, forKey: .ticketId)
        content = try c.decode(String.self, forKey: .content)
        senderType = try c.decode(SenderType.self, forKey: .senderType)
        senderName = try c.decodeNullable(String.self, forKey: .senderName)
        senderId = try c.decodeNullable(String.self, forKey: .senderId)
        isInternal = try c.decode(Bool.self, forKey: .isInternal)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt)
        updatedAt = try c.decode(Timestamp.self, forKey: .updatedAt)
        version = try c.decode(Int.self, forKey: .version)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(ticketId, forKey: .ticketId)
        try c.encode(content, forKey: .content)
        try c.encode(senderType, forKey: .senderType)
        try c.encode(senderName, forKey: .senderName)
        try c.encode(senderId, forKey: .senderId)
        try c.encode(isInternal, forKey: .isInternal)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(version, forKey: .version)
    }
}
