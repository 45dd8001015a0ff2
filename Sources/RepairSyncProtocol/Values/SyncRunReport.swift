/// The outcome of one sync run, as `sync` with `wait` answers it.
public struct SyncRunReport: Codable, Sendable, Hashable {
    /// The run's number since the daemon started.
    public var run: Int
    /// Why the run stopped early; absent when it reached its end.
    public var stop: String?
    public var offline: Bool
    public var pushed: Int
    /// Pushed changes by collection.
    public var pushedByCollection: [String: Int]
    public var pushFailures: Int
    public var dead: Int
    public var conflicts: Int
    /// Records pulled by collection.
    public var pulled: [String: Int]
    public var deleted: Int
    public var durationMilliseconds: Int64
    /// Present when a 429 stopped the run: how long the server asked to wait.
    public var retryAfterMilliseconds: Int64?
    /// Present when a change waits for its retry: how long until it is due.
    public var nextChangeDueMilliseconds: Int64?
    /// Present when collections failed in this run: each with why (the others pulled).
    public var failedCollections: [String: String]?
    /// Present when records' server copies went back (restored, re-created) and were adopted: how many.
    public var rewound: Int?
    /// Present when page copies older than the replica's were shown stale by the server and ignored: how many.
    public var staleCopies: Int?
    /// Present when the run pulled collections again from the beginning (`resync`): which.
    public var resynced: [String]?

    public init(
        run: Int, stop: String?, offline: Bool, pushed: Int, pushedByCollection: [String: Int], pushFailures: Int,
        dead: Int, conflicts: Int, pulled: [String: Int], deleted: Int, durationMilliseconds: Int64,
        retryAfterMilliseconds: Int64?, nextChangeDueMilliseconds: Int64?, failedCollections: [String: String] = [:],
        rewound: Int = 0, staleCopies: Int = 0, resynced: [String] = []
    ) {
        self.resynced = resynced.isEmpty ? nil : resynced
        self.failedCollections = failedCollections.isEmpty ? nil : failedCollections
        self.rewound = rewound == 0 ? nil : rewound
        self.staleCopies = staleCopies == 0 ? nil : staleCopies
        self.run = run
        self.stop = stop
        self.offline = offline
        self.pushed = pushed
        self.pushedByCollection = pushedByCollection
        self.pushFailures = pushFailures
        self.dead = dead
        self.conflicts = conflicts
        self.pulled = pulled
        self.deleted = deleted
        self.durationMilliseconds = durationMilliseconds
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.nextChangeDueMilliseconds = nextChangeDueMilliseconds
    }

    public var succeeded: Bool { stop == nil }
}
