
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

    public var succeeded: Bool { stop == nil }
}
