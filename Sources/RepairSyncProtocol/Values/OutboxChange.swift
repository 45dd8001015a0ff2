public import RepairSyncModels

/// One local change not yet on the server, as `pending` lists it and the local-edit methods answer it.
public struct OutboxChange: Codable, Sendable, Hashable {
    /// A PATCH of changed fields, or the POST of a new record (a message, or a client, an order or a device booked in).
    public enum Operation: OpenEnum {
        case update, create
        case unrecognized(String)

        public static let known: [Operation] = [.update, .create]

        public var rawValue: String {
            switch self {
            case .update: "update"
            case .create: "create"
            case .unrecognized(let raw): raw
            }
        }

        public var displayName: String { rawValue }
    }

    /// The class it is pushed in (`PushPriority`): critical, high or normal.
    public enum Priority: OpenEnum {
        case critical, high, normal
        case unrecognized(String)

        public static let known: [Priority] = [.critical, .high, .normal]

        public var rawValue: String {
            switch self {
            case .critical: "critical"
            case .high: "high"
            case .normal: "normal"
            case .unrecognized(let raw): raw
            }
        }

        public var displayName: String { rawValue }
    }

    /// The change's number: `retry` and `discard` take it.
    public var seq: Int64
    public var collection: String
    public var recordId: String
    /// Changes with the same key reach the server in order (a record, or `tickets:ID` for a ticket's messages).
    public var orderKey: String
    public var kind: Operation
    /// The changed fields by their API names; `null` clears a field.
    public var fields: [String: String?]
    public var idempotencyKey: String
    public var state: ChangeState
    public var attempts: Int
    /// The change may have reached the server and no final answer is known yet (it is *in doubt*).
    public var sent: Bool
    public var nextAttemptAt: Timestamp?
    public var lastError: String?
    public var createdAt: Timestamp
    public var editedAt: Timestamp
    /// The order key of the create this change waits for (a new order's new client, a new device's new order): not
    /// sent before that create is answered.
    public var dependsOn: String?
    /// Dead because the create with this order key is dead; `retry` of it (or of this change) sends that create
    /// again, and this change follows it.
    public var blockedBy: String?
    /// The class it is pushed in; changes of one record (or one ticket's messages) keep their order whatever theirs.
    /// Absent from daemons before protocol 5.
    public var priority: Priority?

    public init(
        seq: Int64, collection: String, recordId: String, orderKey: String, kind: Operation, fields: [String: String?],
        idempotencyKey: String, state: ChangeState, attempts: Int, sent: Bool, nextAttemptAt: Timestamp?,
        lastError: String?, createdAt: Timestamp, editedAt: Timestamp, dependsOn: String? = nil,
        blockedBy: String? = nil, priority: Priority? = nil
    ) {
        self.priority = priority
        self.seq = seq
        self.collection = collection
        self.recordId = recordId
        self.orderKey = orderKey
        self.kind = kind
        self.fields = fields
        self.idempotencyKey = idempotencyKey
        self.state = state
        self.attempts = attempts
        self.sent = sent
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.dependsOn = dependsOn
        self.blockedBy = blockedBy
    }
}
