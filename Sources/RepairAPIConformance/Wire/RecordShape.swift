public import RepairSyncModels

/// The shape of a record as docs/api.md section 3 gives it: every key, its type, and whether it may be null.
///
/// The key sets are held to the daemon's wire types by a test (each type's `CodingKeys`), so the two cannot drift.
public struct RecordShape: Sendable {
    public enum Kind: String, Sendable {
        case string, int, bool, money, timestamp
        /// A string from an open set (section 2.5): any value is valid.
        case status
    }

    public struct Field: Sendable {
        public let key: String
        public let kind: Kind
        public let nullable: Bool
    }

    public let collection: SyncCollection
    public let fields: [Field]

    public var keys: [String] { fields.map(\.key) }

    public static func of(_ collection: SyncCollection) -> RecordShape {
        switch collection {
        case .orders: order
        case .devices: device
        case .clients: client
        case .tickets: ticket
        case .ticketMessages: ticketMessage
        }
    }

    private init(_ collection: SyncCollection, _ fields: [(String, Kind, Bool)]) {
        self.collection = collection
        self.fields = fields.map { Field(key: $0.0, kind: $0.1, nullable: $0.2) }
    }

    private static let stamps: [(String, Kind, Bool)] = [
        ("created_at", .timestamp, false), ("updated_at", .timestamp, false), ("version", .int, false),
    ]

    static let order = RecordShape(
        .orders,
        [
            ("id", .string, false), ("order_number", .int, false), ("status", .status, false),
            ("total", .money, true), ("deposit", .money, true), ("balance", .money, true), ("notes", .string, true),
            ("client_id", .string, false), ("client_name", .string, true), ("client_email", .string, true),
            ("client_phone", .string, true), ("location_id", .string, true), ("location_name", .string, true),
            ("assigned_user_id", .string, true), ("assigned_user_name", .string, true), ("device_count", .int, true),
        ] + stamps)

    static let device = RecordShape(
        .devices,
        [
            ("id", .string, false), ("order_id", .string, false), ("type", .string, false), ("brand", .string, true),
            ("model", .string, true), ("serial", .string, true), ("imei", .string, true), ("passcode", .string, true),
            ("status", .status, false), ("issue", .string, true), ("diagnosis", .string, true),
            ("resolution", .string, true), ("price", .money, true), ("assigned_user_id", .string, true),
        ] + stamps)

    static let client = RecordShape(
        .clients,
        [
            ("id", .string, false), ("email", .string, false), ("first_name", .string, true),
            ("last_name", .string, true), ("phone", .string, true), ("company", .string, true),
            ("address", .string, true), ("city", .string, true), ("postcode", .string, true), ("notes", .string, true),
            ("order_count", .int, false), ("total_spent", .money, false),
        ] + stamps)

    static let ticket = RecordShape(
        .tickets,
        [
            ("id", .string, false), ("ticket_number", .int, false), ("subject", .string, false),
            ("status", .status, false), ("priority", .string, true), ("client_id", .string, true),
            ("client_email", .string, false), ("client_name", .string, true), ("assigned_user_id", .string, true),
            ("assigned_user_name", .string, true), ("order_id", .string, true), ("order_ref", .string, true),
            ("message_count", .int, true), ("last_message_at", .timestamp, true),
        ] + stamps)

    static let ticketMessage = RecordShape(
        .ticketMessages,
        [
            ("id", .string, false), ("ticket_id", .string, false), ("content", .string, false),
            ("sender_type", .status, false), ("sender_name", .string, true), ("sender_id", .string, true),
            ("is_internal", .bool, false),
        ] + stamps)
}
