internal import RepairSyncModels

/// What one read of a changes feed, from its start to `has_more: false`, delivered.
struct FeedRead {
    let collection: SyncCollection
    let limit: Int
    /// Latest version delivered of each record still present at the end of the read.
    var versions: [String: Int] = [:]
    /// Record ids in the order first delivered (for picking records and sampling them).
    var order: [String] = []
    /// The record delivered last (the latest changed), while it is not deleted later in the read.
    var lastDelivered: String?
    /// Tombstones still in force at the end of the read: id → `deleted_at`.
    var tombstones: [String: String] = [:]
    /// What each cursor answered (the last time it was sent; `""` is the start): entries as `id@version` or
    /// `id@deleted`.
    var answers: [String: [String]] = [:]
    /// Every `next_cursor` in the order received.
    var cursors: [String] = []
    /// The `next_cursor` of the page with `has_more: false`.
    var finalCursor: String?
    var pages = 0
    /// The most entries (data plus deleted) one page held, and all the read delivered.
    var fullestPage = 0
    var entries = 0

    var complete: Bool { finalCursor != nil }

    /// The record changed last, as far as this read shows.
    var latest: String? { lastDelivered ?? order.last { versions[$0] != nil } }

    init(collection: SyncCollection, limit: Int) {
        self.collection = collection
        self.limit = limit
    }
}
