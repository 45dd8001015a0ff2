
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

    public var succeeded: Bool { stop == nil }

    /// Whether the run committed anything (a failed run that did is a flaky server, not a dead one).
    public var madeProgress: Bool { pushed > 0 || dead > 0 || conflicts > 0 || deleted > 0 || pulled.values.contains { $0 > 0 } }
}
