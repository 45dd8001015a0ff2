internal import Foundation
internal import Synchronization

/// The write requests `/api/v1` received (PATCH and POST), as they arrived and as they were answered — the
/// `Idempotency-Key`, `If-Match` and body, the status, whether the answer was a replay — so that a test can tell a new
/// request from a replay of an old one and see what went out under each key (`GET /admin/writes`). The newest
/// `capacity` are kept; a long soak does not grow it without end.
final class WriteLog: Sendable {
    struct Entry: Encodable, Sendable {
        var method: String
        var path: String
        var idempotencyKey: String?
        var ifMatch: String?
        /// The body as JSON (nil: not JSON).
        var body: JSONValue?
        var status: Int
        var replayed: Bool

        enum CodingKeys: String, CodingKey {
            case method, path, body, status, replayed
            case idempotencyKey = "idempotency_key"
            case ifMatch = "if_match"
        }
    }

    static let capacity = 10_000

    private struct State {
        var entries: [Entry] = []
        var dropped = 0
    }

    private let state = Mutex(State())

    func record(_ entry: Entry) {
        state.withLock { state in
            state.entries.append(entry)
            // Trimmed a whole `capacity` at a time, so that a long run shifts the array once per `capacity` writes
            // rather than at every write; readers see only the newest `capacity`.
            if state.entries.count >= 2 * Self.capacity {
                state.entries.removeFirst(Self.capacity)
                state.dropped += Self.capacity
            }
        }
    }

    /// The kept entries, oldest first, of one path when `path` is given; and how many older ones were dropped.
    func entries(path: String?) -> (entries: [Entry], dropped: Int) {
        state.withLock { state in
            let excess = max(0, state.entries.count - Self.capacity)
            let kept = state.entries.dropFirst(excess)
            return (path.map { path in kept.filter { $0.path == path } } ?? Array(kept), state.dropped + excess)
        }
    }
}
