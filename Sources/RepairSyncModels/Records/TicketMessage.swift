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
