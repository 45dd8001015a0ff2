/// A record the backend publishes in a changes feed: it has an id, a server row version that grows by one on every
/// server-side write, and the time of that write.
public protocol SyncRecord: Codable, Hashable, Sendable, Identifiable where ID == String {
    static var collection: SyncCollection { get }
    var id: String { get }
    /// The server's row version. A PATCH sends it as `If-Match` to detect concurrent edits.
    var version: Int { get }
    var updatedAt: Timestamp { get }
}
