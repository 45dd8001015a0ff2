public import RepairSyncModels

/// One local change waiting to reach the server.
public struct OutboxEntry: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// A PATCH of changed fields of an order or a device.
        case update
        /// A POST of a new record: a ticket message (`fields`: ticket_id, content, is_internal), or a client, an order
        /// or a device booked in here (`fields`: the create body of docs/api.md section 4.7, without the id; a device's
        /// passcode sealed as in the replica).
        case create
    }

    public enum State: String, Sendable, Codable {
        /// Waiting for its turn (or for `nextAttemptAt` after a failure).
        case pending
        /// Being sent; a process that stops here sends it again with the same idempotency key.
        case inFlight = "in_flight"
        /// Failed transiently; retried at `nextAttemptAt`.
        case failed
        /// Given up on (permanent error or too many attempts); kept, visible, retryable or discardable on request.
        /// Its values are not shown in the record (the server's are).
        case dead
        /// Waiting for a manual conflict resolution.
        case held
    }

    public var seq: Int64
    public var collection: SyncCollection
    public var recordId: String
    public var orderKey: String
    public var kind: Kind
    public var fields: FieldValues
    public var idempotencyKey: String
    public var state: State
    public var attempts: Int
    /// The current idempotency key may have reached the server, and no final answer for it is known: the change is
    /// *in doubt*. Nothing coalesces into it, and a server copy showing its values may be its own write.
    public var sent: Bool = false
    public var nextAttemptAt: Timestamp?
    public var lastError: String?
    public var createdAt: Timestamp
    /// When the change was last edited locally (the local clock): last-write-wins compares it.
    public var editedAt: Timestamp
    /// The order key of the create this entry waits for (a new order's new client, a new device's new order): not
    /// sent while that create is in the outbox, so that no child reaches the server before its parent.
    public var dependsOn: String? = nil
    /// Dead because the create with this order key (one it waits for, or its own record's) is dead; retrying or
    /// settling that create brings it back.
    public var blockedBy: String? = nil
    /// The class it is pushed in (from its fields and the configured classes; `PushPriority`).
    public var priority: PushPriority = .normal

    enum CodingKeys: String, CodingKey {
        case seq, collection, kind, fields, state, attempts, sent, priority
        case recordId = "record_id"
        case orderKey = "order_key"
        case idempotencyKey = "idempotency_key"
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
        case createdAt = "created_at"
        case editedAt = "edited_at"
        case dependsOn = "depends_on"
        case blockedBy = "blocked_by"
    }

    /// Still meant to reach the server (not given up on): its values show in the record.
    public var isLive: Bool { state != .dead }
}
