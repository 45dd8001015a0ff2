internal import Foundation
internal import Synchronization

/// A deliberate departure from docs/api.md that the development backend can be told to make, one per clause
/// family, so that `repair-api-conformance` can be shown to catch each of them — and nothing else.
///
/// Switched with `PUT /admin/defects` or `repair-api-dev --defect NAME`; off by default.
public enum Defect: String, CaseIterable, Codable, Sendable {
    /// PATCH applies whatever `If-Match` says (as if the header were absent): no 412, a stale write wins.
    case ignoreIfMatch = "ignore_if_match"
    /// `Idempotency-Key` is not remembered: a retried write is processed afresh, a reused key is not refused.
    case forgetIdempotencyKeys = "forget_idempotency_keys"
    /// Responses carry no `Date` header.
    case dropDateHeader = "drop_date_header"
    /// Money goes through a binary double and out as a JSON number printed to 17 digits (`149.99000000000001`).
    case floatMoney = "float_money"
    /// The first time each cursor is sent, the page before it is answered again (same `next_cursor`,
    /// `has_more: true`), as a server whose cursor points one page back would.
    case repeatPage = "repeat_page"
    /// A page that has more after it hands out a `next_cursor` past the first entry of the next page, which no
    /// client then ever sees.
    case skipRecords = "skip_records"
    /// A create sent again with the same id and body (under another key) answers 201, as if it had made the record
    /// again, instead of 200 with the record it made.
    case createTwice = "create_twice"
    /// The change stream (`GET /api/v1/events`) sends its first heartbeat and no other: a quiet stream falls silent
    /// after its first bytes.
    case noHeartbeat = "no_heartbeat"
    /// Answers of 1 KiB or more are gzipped for a client that takes gzip, as usual, but without
    /// `Vary: Accept-Encoding`, so a cache in between could hand the compressed copy to a client that cannot inflate.
    case noVary = "no_vary"
    /// Answers of 1 KiB or more are gzipped whatever the client's `Accept-Encoding` says (`identity` and `gzip;q=0`
    /// included).
    case compressAlways = "compress_always"
    /// A changes feed's `limit` (when valid) is taken as 1000: pages hold more entries than the client asked for.
    case ignoreLimit = "ignore_limit"
    /// A PATCH is answered `200` at version + 1 with its `ETag`, as if applied, but the record's fields stay as they
    /// were: the write is acknowledged and not made.
    case dropPatchValues = "drop_patch_values"
    /// Every answer with a record (a page, a GET, a write's answer, a 412; the dashboard's too) leaves out the keys
    /// whose value is `null` (`omitempty`), instead of sending them as explicit `null`s.
    case omitNullKeys = "omit_null_keys"
}

/// Which defects are on, and the bookkeeping `repeat_page` needs: which cursor each cursor was issued after.
final class DefectSwitches: Sendable {
    private struct State {
        var active: Set<Defect> = []
        /// `next_cursor` → the cursor of the request that got it (nil: the start of the feed).
        var issuedAfter: [String: String?] = [:]
        /// Cursors whose page has already been repeated once.
        var repeated: Set<String> = []
    }

    private let state: Mutex<State>

    init(_ active: Set<Defect> = []) {
        state = Mutex(State(active: active))
    }

    var active: Set<Defect> { state.withLock { $0.active } }

    func isOn(_ defect: Defect) -> Bool { state.withLock { $0.active.contains(defect) } }

    func set(_ defects: Set<Defect>) {
        state.withLock { $0 = State(active: defects) }
    }

    /// `repeat_page`: the cursor to answer instead of `cursor` — the one it was issued after — the first time
    /// `cursor` is sent; `.none` to answer it as it is.
    func repeatInstead(of cursor: String) -> String?? {
        state.withLock { state in
            guard let previous = state.issuedAfter[cursor], state.repeated.insert(cursor).inserted else { return .none }
            return .some(previous)
        }
    }

    /// Notes that `next` was issued in answer to `cursor`.
    func issued(_ next: String, after cursor: String?) {
        state.withLock { state in
            if next != cursor { state.issuedAfter[next] = cursor }
        }
    }
}
