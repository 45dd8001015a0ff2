/// What the replica knows about one collection's changes feed: where to resume, when it last synced, and how.
public struct SyncMetadata: Codable, Hashable, Sendable {
    public var collection: SyncCollection
    /// The server's opaque cursor after the last committed page; nil means "from the beginning".
    public var cursor: String?
    /// When a pull of this collection last ended, successfully or not.
    public var lastSyncedAt: Timestamp?
    /// When a pull of this collection last reached the end of the feed.
    public var lastSuccessAt: Timestamp?
    public var state: State
    public var lastError: String?

    public init(
        collection: SyncCollection, cursor: String? = nil, lastSyncedAt: Timestamp? = nil,
        lastSuccessAt: Timestamp? = nil, state: State = .initial, lastError: String? = nil
    ) {
        self.collection = collection
        self.cursor = cursor
        self.lastSyncedAt = lastSyncedAt
        self.lastSuccessAt = lastSuccessAt
        self.state = state
        self.lastError = lastError
    }

    public enum CodingKeys: String, CodingKey {
        case collection, cursor, state
        case lastSyncedAt = "last_synced_at"
        case lastSuccessAt = "last_success_at"
        case lastError = "last_error"
    }

    /// The pull state of one collection.
    public enum State: String, Codable, Sendable {
        /// Never pulled, or the cursor was reset (e.g. after a 410): the next pull starts from the beginning.
        case initial
        /// Caught up as of `lastSuccessAt`.
        case idle
        /// A pull is in progress, or was when the process stopped; it resumes from `cursor`.
        case pulling
        /// The last pull failed; `lastError` says why. The next pull resumes from `cursor`.
        case error
    }
}
