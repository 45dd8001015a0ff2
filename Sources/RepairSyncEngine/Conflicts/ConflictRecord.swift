public import RepairSyncModels

/// One entry of the conflict audit log: what both sides had, how it was resolved, by which policy.
public struct ConflictRecord: Sendable, Hashable, Codable {
    public enum Outcome: String, Sendable, Codable {
        case keptLocal = "kept_local"
        case keptRemote = "kept_remote"
        case merged
        /// Manual policy: waiting for a decision.
        case awaitingDecision = "awaiting_decision"
        /// The server deleted the record while a local change was pending; the local values are kept here.
        case deletedRemotely = "deleted_remotely"
        /// A person discarded a change the server had refused (or given up on); the server's values are shown again.
        case discarded
        /// The server's copy went back (a lower version than the base: restored from a backup, or deleted and
        /// created again): it was taken as the new base, and pending local changes were rebased onto it.
        case historyRewound = "history_rewound"
        /// The server acknowledged a change (2xx) with a copy that holds other values for fields the change set (a
        /// server rule rewrote them, or the write was not applied): the server's copy stands; the values sent are
        /// kept here.
        case serverOverrode = "server_overrode"
    }

    public var id: Int64
    public var collection: SyncCollection
    public var recordId: String
    /// The fields in conflict (changed on both sides, or all local fields for a record-level decision).
    public var fields: [String]
    public var base: FieldValues
    public var local: FieldValues
    public var remote: FieldValues
    public var remoteVersion: Int?
    public var policy: String
    public var outcome: Outcome
    public var isOpen: Bool
    public var detectedAt: Timestamp
    public var resolvedAt: Timestamp?

    enum CodingKeys: String, CodingKey {
        case id, collection, fields, base, local, remote, policy, outcome
        case recordId = "record_id"
        case remoteVersion = "remote_version"
        case isOpen = "open"
        case detectedAt = "detected_at"
        case resolvedAt = "resolved_at"
    }
}

/// A person's decision on an open conflict.
public enum ConflictDecision: Sendable, Hashable {
    case keepLocal
    case keepRemote
    /// Per field: true keeps the local value, false takes the remote one. Fields not named keep local.
    case perField([String: Bool])
}
