/// The outcome of one sync run.
public struct SyncReport: Sendable, Hashable, Codable {
    public var run: Int
    /// nil when the run reached its end.
    public var stop: String?
    public var offline: Bool
    public var pushed: Int
    /// Pushed changes per collection name.
    public var pushedByCollection: [String: Int] = [:]
    public var pushFailures: Int
    public var dead: Int
    public var conflicts: Int
    public var pulled: [String: Int]
    public var deleted: Int
    public var durationMilliseconds: Int64
    /// When the run stopped on a 429: how long the server asked to wait.
    public var retryAfterMilliseconds: Int64? = nil
    /// How long until the earliest change waiting for a retry is due (nil: none waits).
    public var nextChangeDueMilliseconds: Int64? = nil
    /// The collections the run was asked to pull, in pull order.
    public var requestedCollections: [String] = []
    /// The collections this run pulled again from the beginning (`resync`).
    public var resynced: [String] = []
    /// Collections whose pull failed in this run (name → why); the others pulled.
    public var failedCollections: [String: String] = [:]
    /// Records whose server copy went back (older than the replica's, confirmed by the server) and was adopted.
    public var rewound: Int = 0
    /// Page copies older than the replica's that the server showed to be stale (ignored).
    public var staleCopies: Int = 0

    public var succeeded: Bool { stop == nil }

    /// Whether the run committed anything (a failed run that did is a flaky server, not a dead one).
    public var madeProgress: Bool {
        pushed > 0 || dead > 0 || conflicts > 0 || deleted > 0 || rewound > 0 || pulled.values.contains { $0 > 0 }
    }
}
