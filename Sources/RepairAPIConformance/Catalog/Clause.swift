public import RepairSyncModels

/// One testable clause of docs/api.md: what a server must do, where the contract says it, and for which
/// collections it is checked separately.
///
/// A clause checked per collection gives one check per collection, named `clause:collection`
/// (`feed-paging:orders`); the others give one check named like the clause (`date-header`).
public struct Clause: Sendable, Hashable {
    /// Stable name, used in the output, in `--only` and by CI scripts.
    public let id: String
    /// The section of docs/api.md that states the clause, e.g. `4.2`.
    public let section: String
    /// The clause in one line.
    public let summary: String
    /// Collections the clause is checked on one by one; empty for a clause checked once.
    public let collections: [SyncCollection]
    /// True for what a client cannot provoke (a tombstone, an expired cursor, a 429): checked when it occurs during
    /// the run, and otherwise reported as not exercised, never as passed.
    public let onlyWhenObserved: Bool
    /// Other sections whose rules the clause also holds a server to (`record-keys`, stated in 2.4, checks the shapes
    /// of 3.1–3.5).
    public let covers: [String]

    init(
        _ id: String, _ section: String, _ summary: String, collections: [SyncCollection] = [],
        onlyWhenObserved: Bool = false, covers: [String] = []
    ) {
        self.id = id
        self.section = section
        self.summary = summary
        self.collections = collections
        self.onlyWhenObserved = onlyWhenObserved
        self.covers = covers
    }

    /// The checks this clause gives.
    public var checkIDs: [CheckID] {
        collections.isEmpty ? [CheckID(clause: id)] : collections.map { CheckID(clause: id, collection: $0) }
    }
}

/// The name of one check: its clause, and the collection when the clause is checked per collection.
public struct CheckID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let clause: String
    public let collection: SyncCollection?

    public init(clause: String, collection: SyncCollection? = nil) {
        self.clause = clause
        self.collection = collection
    }

    /// `feed-paging:orders`, `date-header`.
    public var description: String { collection.map { "\(clause):\($0.name)" } ?? clause }

    public static func < (lhs: CheckID, rhs: CheckID) -> Bool { lhs.description < rhs.description }
}

/// Every clause the tool checks, in the order of docs/api.md.
public enum ConformanceCatalog {
    static let all = SyncCollection.pullOrder
    static let writable: [SyncCollection] = [.orders, .devices]
    static let creatable: [SyncCollection] = [.clients, .orders, .devices]

    public static let clauses: [Clause] = [
        Clause(
            "auth-missing", "2.1", "a request without a token answers 401 unauthorized with WWW-Authenticate: Bearer"),
        Clause(
            "auth-invalid", "2.1",
            "a request with an unknown token answers 401 unauthorized with WWW-Authenticate: Bearer"),
        Clause("date-header", "2.1", "every response carries an HTTP Date header"),
        Clause("content-type", "2.1", "every response body is JSON: Content-Type application/json, UTF-8"),
        Clause(
            "compression", "2.1",
            "informational: whether answers of 1 KiB or more come gzip-compressed (optional for a server; never a failure)",
            onlyWhenObserved: true),
        Clause(
            "compression-unrequested", "2.1",
            "a request whose Accept-Encoding does not take gzip (identity, gzip;q=0) gets an unencoded answer"),
        Clause(
            "compression-vary", "2.1",
            "every compressed answer carries Vary: Accept-Encoding (when the server compresses)",
            onlyWhenObserved: true),
        Clause("timestamps", "2.2", "every timestamp is RFC 3339 with a time zone offset"),
        Clause(
            "money", "2.3",
            "money is an exact decimal (plain decimal text or a JSON number), never binary floating-point digits"),
        Clause(
            "record-keys", "2.4",
            "every record carries every key of its shape (section 3) with its type, null only where allowed",
            covers: ["3.1", "3.2", "3.3", "3.4", "3.5"]),
        Clause(
            "unknown-status", "2.5",
            "a PATCH with an unknown status answers 422 invalid_value (field status) and changes nothing",
            collections: writable),
        Clause(
            "tombstones", "3.6", "a tombstone is {id, deleted_at} and the deleted record's GET answers 404",
            onlyWhenObserved: true),
        Clause("unknown-collection", "4", "an unknown collection answers 404 not_found"),
        Clause("health", "4.1", "GET /api/v1/health answers 200 {\"status\":\"ok\",\"time\":…} without a token"),
        Clause(
            "feed-paging", "4.2",
            "the feed pages to has_more false; every page decodes as the daemon decodes it, with a next_cursor",
            collections: all),
        Clause("feed-limit", "4.2", "no page holds more entries (data plus deleted) than limit", collections: all),
        Clause(
            "feed-unique", "4.2", "an id appears once per page, and no record version is delivered twice in one read",
            collections: all),
        Clause(
            "feed-cursor", "4.2",
            "a cursor keeps working: sent again it answers the same entries; the last one answers nothing already delivered",
            collections: all),
        Clause(
            "feed-reread", "4.2", "reading the feed a second time, with another limit, gives the same records",
            collections: all),
        Clause(
            "feed-limit-range", "4.2",
            "a limit outside 1…1000 or not an integer answers 400 invalid_request (field limit)"),
        Clause("feed-unknown-cursor", "4.2", "an unknown cursor answers 410 cursor_expired"),
        Clause(
            "feed-expired", "4.2",
            "a cursor that expires during a read answers 410 cursor_expired, and the feed reads again from the start",
            onlyWhenObserved: true),
        Clause(
            "record-get", "4.3",
            "GET /{collection}/{id} answers the record as the feed has it; an unknown id answers 404 not_found",
            collections: all),
        Clause(
            "patch-if-match", "4.4",
            "a PATCH with the current If-Match answers 200 with the whole record, version + 1 and its ETag",
            collections: writable, covers: ["2.6"]),
        Clause(
            "patch-stale", "4.4",
            "a PATCH with a stale If-Match answers 412 version_mismatch with current, and changes nothing",
            collections: writable),
        Clause(
            "patch-invalid-field", "4.4",
            "a PATCH of a key that cannot be changed, or does not exist, answers 422 invalid_field naming it, and changes nothing",
            collections: writable),
        Clause(
            "patch-invalid-value", "4.4",
            "a PATCH with a value of the wrong type answers 422 invalid_value naming the field, and changes nothing",
            collections: writable),
        Clause(
            "patch-not-object", "4.4",
            "a PATCH whose body is not a JSON object, or is {}, answers 400 invalid_request, and changes nothing",
            collections: writable),
        Clause(
            "patch-malformed-if-match", "4.4",
            "a PATCH whose If-Match is not a version answers 400 invalid_request (field If-Match), and changes nothing",
            collections: writable),
        Clause(
            "patch-bare-if-match", "4.4", "If-Match as a bare integer (If-Match: 7) is accepted: 200, version + 1",
            collections: writable),
        Clause(
            "patch-not-found", "4.4", "a PATCH of a record that does not exist answers 404 not_found",
            collections: writable),
        Clause(
            "edit-in-feed", "4.4",
            "the edited record appears, at its new version, in the feed after the cursor that preceded the edit",
            collections: writable),
        Clause(
            "message-create", "4.5", "POST /tickets/{id}/messages answers 201 with the new message, sender_type staff"),
        Clause(
            "message-dedupe", "4.5",
            "the same message POSTed again (same id, another key) answers 200 with it: one message, one ticket write"),
        Clause(
            "message-in-feed", "4.5",
            "the new message, and its ticket with message_count + 1, appear in their feeds after the cursors that preceded them"
        ),
        Clause(
            "message-invalid-value", "4.5",
            "a message whose id is not a UUID, or whose content is blank, answers 422 invalid_value naming it; nothing is written"
        ),
        Clause(
            "message-not-found", "4.5",
            "a message to a ticket that does not exist answers 404 not_found; nothing is written"),
        Clause(
            "message-duplicate", "4.5",
            "the id of an existing message with other content answers 409 duplicate_id; the message and its ticket are unchanged"
        ),
        Clause(
            "dashboard", "4.6",
            "GET /dashboard/stats answers every metric for today, week and month; an unknown period answers 400 invalid_request (field period)"
        ),
        Clause("create-not-object", "4.7", "a create whose body is not a JSON object answers 400 invalid_request"),
        Clause(
            "create-not-creatable", "4.7",
            "POST /tickets and /ticket_messages answer 405 invalid_request and create nothing"),
        Clause(
            "create-invalid-field", "4.7",
            "a create that sets a key the server sets (total_spent, order_number, version) answers 422 invalid_field naming it, and creates nothing",
            collections: creatable),
        Clause(
            "create-invalid-value", "4.7",
            "a create with an id that is not a UUID, or negative money, answers 422 invalid_value naming it, and creates nothing",
            collections: creatable),
        Clause(
            "create-parent-not-found", "4.7",
            "an order naming no client, a device naming no order, answers 422 parent_not_found naming the key, and creates nothing",
            collections: [.orders, .devices]),
        Clause(
            "create-new", "4.7",
            "a create answers 201 with the record: the id and values sent, version 1, ETag \"1\", the server's own fields set (with --creates)",
            collections: creatable),
        Clause(
            "create-replay", "4.7",
            "a create replayed with its key answers the original 201; the same id and body under another key answer 200; nothing is written twice (with --creates)",
            collections: creatable),
        Clause(
            "create-duplicate", "4.7",
            "the same id with another body answers 409 duplicate_id and changes nothing (with --creates)",
            collections: creatable),
        Clause(
            "create-parent-write", "4.7",
            "a new order writes its client (order_count + 1), a new device its order (device_count, total, balance), each version + 1 (with --creates)",
            collections: [.orders, .devices]),
        Clause(
            "create-in-feed", "4.7",
            "the new record is in its feed, as it is now, after the cursor that preceded the creates (with --creates)",
            collections: creatable),
        Clause(
            "events-open", "4.8",
            "GET /events answers 200 text/event-stream with Cache-Control no-store, ready first with an id and heartbeat_ms of at most 15000"
        ),
        Clause(
            "events-heartbeat", "4.8",
            "a quiet stream sends something (a heartbeat) within heartbeat_ms of its last event"),
        Clause(
            "events-change", "4.8",
            "the run's own writes are announced as change events naming their collections, with increasing ids"),
        Clause(
            "events-reset", "4.8", "an unknown Last-Event-ID gets ready without an id, then reset with the newest id"),
        Clause("events-auth", "4.8", "the stream without a token answers 401 unauthorized"),
        Clause(
            "idempotent-replay", "5",
            "a request replayed with its Idempotency-Key answers the original status and body with Idempotent-Replayed: true, and writes nothing",
            collections: [.orders, .devices, .ticketMessages]),
        Clause(
            "idempotency-reuse", "5",
            "an Idempotency-Key sent with another body, or on another path, answers 422 idempotency_key_reused",
            collections: writable),
        Clause(
            "idempotency-key-format", "5",
            "an Idempotency-Key that is not 1–255 printable ASCII characters answers 400 invalid_request (field Idempotency-Key), and nothing is written",
            collections: writable),
        Clause("error-shape", "6", "every error body is {\"error\": {\"code\", \"message\"}} with string values"),
        Clause(
            "rate-limit", "6",
            "a 429 carries rate_limited and a Retry-After the daemon reads (seconds or an HTTP date), and the request goes through after the wait",
            onlyWhenObserved: true),
        Clause(
            "unavailable", "6",
            "a 503 with Retry-After carries unavailable and a Retry-After the daemon reads, and the request goes through after the wait",
            onlyWhenObserved: true),
    ]

    /// The sections of the contract (2–6 of docs/api.md) that no clause checks, each with why a client cannot check
    /// it. Every other section has at least one clause (its `section` or among its `covers`): a test holds the
    /// catalog to the document, so a section added to the contract needs a check or a line here.
    public static let uncheckable: [(section: String, reason: String)] = []

    /// Every check, in catalog order.
    public static var checkIDs: [CheckID] { clauses.flatMap(\.checkIDs) }

    public static func clause(_ id: String) -> Clause? { clauses.first { $0.id == id } }
}
