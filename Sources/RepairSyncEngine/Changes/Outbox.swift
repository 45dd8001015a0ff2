internal import Foundation
internal import GRDB
internal import RepairSyncModels

/// The outbox table: durable local changes, in enqueue order, with their retry state.
///
/// All functions run inside a caller's transaction, so that a change and the row it describes are written
/// together, and an acknowledgement and the server copy it brings are applied together.
enum Outbox {
    /// What `entry(_:)` reads, by position: every query of entries selects `columns` first. (A `Row` looked up by
    /// name compares lowercased names for each column, a tenth of the writer's time for a change that joins its
    /// record's pending one.)
    private enum Column: Int, CaseIterable {
        case seq, collection, recordId, orderKey, kind, fields, idempotencyKey, state, attempts, sent, nextAttemptAt
        case lastError, createdAt, editedAt, dependsOn, blockedBy, priority

        var name: String {
            switch self {
            case .seq: "seq"
            case .collection: "collection"
            case .recordId: "record_id"
            case .orderKey: "order_key"
            case .kind: "kind"
            case .fields: "fields"
            case .idempotencyKey: "idempotency_key"
            case .state: "state"
            case .attempts: "attempts"
            case .sent: "sent"
            case .nextAttemptAt: "next_attempt_at"
            case .lastError: "last_error"
            case .createdAt: "created_at"
            case .editedAt: "edited_at"
            case .dependsOn: "depends_on"
            case .blockedBy: "blocked_by"
            case .priority: "priority"
            }
        }
    }

    static let columns = Column.allCases.map(\.name).joined(separator: ", ")

    static func entry(_ row: Row) throws -> OutboxEntry {
        func value<Value: DatabaseValueConvertible>(_ column: Column) -> Value { row[column.rawValue] }
        func optional<Value: DatabaseValueConvertible>(_ column: Column) -> Value? { row[column.rawValue] }
        guard let collection = SyncCollection(rawValue: value(.collection)),
            let kind = OutboxEntry.Kind(rawValue: value(.kind)),
            let state = OutboxEntry.State(rawValue: value(.state))
        else { throw EngineError.corruptOutbox("entry \(optional(.seq) as Int64? ?? -1)") }
        return OutboxEntry(
            seq: value(.seq), collection: collection, recordId: value(.recordId), orderKey: value(.orderKey),
            kind: kind, fields: try FieldValuesJSON.decode(value(.fields)), idempotencyKey: value(.idempotencyKey),
            state: state, attempts: value(.attempts), sent: value(.sent),
            nextAttemptAt: (optional(.nextAttemptAt) as Int64?).map(Timestamp.init(millisecondsSince1970:)),
            lastError: optional(.lastError),
            createdAt: Timestamp(millisecondsSince1970: value(.createdAt)),
            editedAt: Timestamp(millisecondsSince1970: value(.editedAt)), dependsOn: optional(.dependsOn),
            blockedBy: optional(.blockedBy), priority: PushPriority(rawValue: value(.priority)) ?? .normal)
    }

    /// The class the triggers gave the entry (after its fields were written).
    private static func priority(_ db: Database, seq: Int64) throws -> PushPriority {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT priority FROM outbox WHERE seq = ?"), arguments: [seq])
            .flatMap(PushPriority.init(rawValue:)) ?? .normal
    }

    /// Queues changed fields of a record.
    ///
    /// - Coalesces into the record's latest entry only when that entry is pending and was never sent (its key has
    ///   never been seen by the server); otherwise a new entry with a new key follows it.
    /// - The new values supersede the same fields of the record's dead and held entries: a `retry` or a conflict
    ///   decision never brings back a value a later edit replaced.
    /// - While the record has an open (manual) conflict, the change waits with it (held): sending it against a base
    ///   the server has moved past would only be refused, and the person deciding sees the latest local values.
    /// - A record created here and not yet on the server: the edit goes into its create while that was never sent
    ///   (pending, or dead after a refusal); otherwise it follows the create, and is dead with it when it is dead.
    ///
    /// `entries` are the record's entries when the caller read them in this transaction (not read again);
    /// `openConflict`, whether the record has an open conflict, likewise (false: not looked up).
    @discardableResult
    static func enqueueUpdate(
        _ db: Database, collection: SyncCollection, id: String, fields: FieldValues, now: Timestamp,
        entries known: [OutboxEntry]? = nil, openConflict knownOpen: Bool? = nil
    ) throws -> OutboxEntry {
        let all = try known ?? entries(db, collection: collection, id: id)
        let ownCreate = all.first(where: { $0.kind == .create })
        if var create = ownCreate {
            if !create.sent, create.state == .pending || create.state == .dead {
                create.fields = create.fields.overlaid(with: fields)
                create.editedAt = now
                try rewriteUnsentCreate(db, seq: create.seq, fields: create.fields, now: now)
                create.priority = try priority(db, seq: create.seq)
                return create
            }
        }
        let existing = all.filter { $0.kind == .update }
        for entry in existing where entry.state == .dead || entry.state == .held {
            let remaining = entry.fields.filter { fields[$0.key] == nil }
            guard remaining.count != entry.fields.count else { continue }
            // Its request, if it was sent, may have been applied: evidence of our own write from now on.
            try BaseCopies.rememberGoneInDoubt(db, entry)
            if remaining.isEmpty {
                try remove(db, seq: entry.seq)
            } else {
                // Fewer fields make another request: one that may have been sent gets a new key (never the old key
                // with another body).
                try rewrite(db, entry, fields: remaining)
            }
        }
        if knownOpen != false, let open = try ConflictLog.open(db, collection: collection, id: id) {
            try ConflictLog.updateLocal(db, id: open.id, with: fields)
            return try insert(
                db, collection: collection, id: id, orderKey: "\(collection.name):\(id)", kind: .update, fields: fields,
                now: now, state: .held)
        }
        if var latest = existing.last, latest.state == .pending, !latest.sent {
            latest.fields = latest.fields.overlaid(with: fields)
            latest.editedAt = now
            try rewriteUnsent(db, seq: latest.seq, fields: latest.fields, now: now)
            latest.priority = try priority(db, seq: latest.seq)
            return latest
        }
        let orderKey = "\(collection.name):\(id)"
        let entry = try insert(
            db, collection: collection, id: id, orderKey: orderKey, kind: .update, fields: fields, now: now)
        // What blocks an update is the record's own create when it is dead, or an ancestor's through it: a record
        // with no create among its entries (made on the server, or its create acknowledged) waits for nothing, and
        // the look-up is skipped — nearly every change another program queues.
        guard ownCreate != nil, let blocker = try deadCreate(db, orderKey: orderKey) else {
            return entry
        }
        return try markBlocked(db, entry, by: blocker)
    }

    // MARK: Records created here

    /// The order key of a record: what its entries share, and what a new child's entry waits for.
    static func orderKey(_ collection: SyncCollection, _ id: String) -> String { "\(collection.name):\(id)" }

    /// The create entry of a record, if the record was created here and the server has not acknowledged it yet.
    static func createEntry(_ db: Database, collection: SyncCollection, id: String) throws -> OutboxEntry? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT \(columns) FROM outbox WHERE order_key = ? AND kind = 'create' AND record_id = ? LIMIT 1"),
            arguments: [orderKey(collection, id), id]
        ).map(entry)
    }

    /// A create never sent takes new fields: an edit of a record created here goes into it, and a row another program
    /// inserted, queued again, gives it the row's values. A create that may have been sent is left as it went.
    static func rewriteUnsentCreate(_ db: Database, seq: Int64, fields: FieldValues, now: Timestamp) throws {
        try rewriteUnsent(db, seq: seq, fields: fields, now: now)
    }

    /// New fields for an entry never sent. Cached: an edit joining its pending change comes through here, and the
    /// statement's triggers make it costly to compile.
    private static func rewriteUnsent(_ db: Database, seq: Int64, fields: FieldValues, now: Timestamp) throws {
        try db.cachedStatement(sql: "UPDATE outbox SET fields = ?, edited_at = ? WHERE seq = ? AND sent = 0")
            .execute(arguments: [FieldValuesJSON.encode(fields), now.millisecondsSince1970, seq])
    }

    /// The records created here under a record whose creates (or, for a ticket, new messages) are queued: a client's
    /// orders, an order's devices, a ticket's messages. Nothing for the other collections.
    static func queuedChildren(_ db: Database, of collection: SyncCollection, id: String) throws
        -> [(collection: SyncCollection, id: String)]
    {
        switch collection {
        case .clients:
            try String.fetchAll(
                db,
                sql:
                    "SELECT DISTINCT record_id FROM outbox WHERE collection = 'orders' AND kind = 'create' AND record_id IN (SELECT id FROM orders WHERE client_id = ?)",
                arguments: [id]
            ).map { (.orders, $0) }
        case .orders:
            try String.fetchAll(
                db,
                sql:
                    "SELECT DISTINCT record_id FROM outbox WHERE collection = 'devices' AND kind = 'create' AND record_id IN (SELECT id FROM devices WHERE order_id = ?)",
                arguments: [id]
            ).map { (.devices, $0) }
        case .tickets:
            try String.fetchAll(
                db, sql: "SELECT DISTINCT record_id FROM outbox WHERE collection = 'ticket_messages' AND order_key = ?",
                arguments: ["tickets:\(id)"]
            ).map { (.ticketMessages, $0) }
        default:
            []
        }
    }

    /// Queues a client, an order or a device created here. `dependsOn` is the order key of its parent's create when
    /// the parent is not on the server yet: the entry is not sent before that create is acknowledged, and is dead
    /// (blocked) while that create is dead.
    @discardableResult
    static func enqueueCreate(
        _ db: Database, collection: SyncCollection, id: String, fields: FieldValues, dependsOn: String?, now: Timestamp
    ) throws -> OutboxEntry {
        var entry = try insert(
            db, collection: collection, id: id, orderKey: orderKey(collection, id), kind: .create, fields: fields,
            now: now)
        if let dependsOn {
            try db.execute(sql: "UPDATE outbox SET depends_on = ? WHERE seq = ?", arguments: [dependsOn, entry.seq])
            entry.dependsOn = dependsOn
            if let blocker = try deadCreate(db, orderKey: dependsOn) {
                return try markBlocked(db, entry, by: blocker)
            }
        }
        return entry
    }

    /// The dead create that keeps entries of `orderKey` from being sent: the record's own create, or (through the
    /// create's `depends_on`) an ancestor's. Nil when none is dead.
    static func deadCreate(_ db: Database, orderKey: String) throws -> OutboxEntry? {
        var key: String? = orderKey
        var seen: Set<String> = []
        while let current = key, seen.insert(current).inserted {
            // Most records were made on the server and have no create: its seq alone first (no row of every column),
            // the entry only when there is one.
            guard
                let seq = try Int64.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT seq FROM outbox WHERE order_key = ? AND kind = 'create' ORDER BY seq LIMIT 1"),
                    arguments: [current]),
                let create = try entry(db, seq: seq), create.collection != .ticketMessages
            else { return nil }
            if create.state == .dead { return create }
            key = create.dependsOn
        }
        return nil
    }

    /// Makes `entry` dead because `blocker` (a dead create it waits for) is dead, with the reason.
    private static func markBlocked(_ db: Database, _ entry: OutboxEntry, by blocker: OutboxEntry) throws -> OutboxEntry
    {
        let root = blocker.blockedBy ?? blocker.orderKey
        let reason = blockedReason(blocker)
        try db.execute(
            sql:
                "UPDATE outbox SET state = 'dead', blocked_by = ?, last_error = ?, next_attempt_at = NULL WHERE seq = ?",
            arguments: [root, reason, entry.seq])
        var blocked = entry
        blocked.state = .dead
        blocked.blockedBy = root
        blocked.lastError = reason
        return blocked
    }

    private static func blockedReason(_ blocker: OutboxEntry) -> String {
        "not sent: it waits for the creation of \(blocker.collection.name) \(blocker.recordId), which is dead (\(blocker.lastError ?? "given up"))"
    }

    /// The order keys of `root` and of every record whose create waits for it, directly or through others.
    static func dependentKeys(_ db: Database, of root: String) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                WITH RECURSIVE keys(key) AS (
                    SELECT ?
                    UNION SELECT o.order_key FROM outbox o JOIN keys ON o.depends_on = keys.key WHERE o.kind = 'create'
                )
                SELECT key FROM keys
                """, arguments: [root])
    }

    /// A create is dead (refused, or given up on): everything that waits for it — its own record's later entries,
    /// the creates of its children and theirs — is dead too, with the reason and `blocked_by` naming it, so that
    /// nothing is sent for a record the server does not have. Returns how many entries it stopped.
    @discardableResult
    static func blockDependents(_ db: Database, seq: Int64) throws -> Int {
        guard let dead = try entry(db, seq: seq), dead.kind == .create, dead.collection != .ticketMessages,
            dead.state == .dead
        else { return 0 }
        let keys = try dependentKeys(db, of: dead.orderKey)
        let root = dead.blockedBy ?? dead.orderKey
        try db.execute(
            sql: """
                UPDATE outbox SET state = 'dead', blocked_by = ?, last_error = ?, next_attempt_at = NULL
                WHERE state <> 'dead' AND seq <> ? AND order_key IN (\(databaseQuestionMarks(count: keys.count)))
                """, arguments: [root, blockedReason(dead), dead.seq] + StatementArguments(keys))
        return db.changesCount
    }

    /// The create with order key `key` is alive again (retried) or settled (the server has the record): the entries
    /// that were dead because of it go back to pending. They were never sent (they waited), so they keep their keys.
    static func unblock(_ db: Database, key: String) throws {
        try db.execute(
            sql: """
                UPDATE outbox SET state = 'pending', blocked_by = NULL, last_error = NULL, next_attempt_at = NULL,
                    attempts = 0
                WHERE blocked_by = ?
                """, arguments: [key])
    }

    /// The record's create reached the server and the server now shows the record (in a feed, or its own
    /// endpoint): the create is settled, as a replay of its key would have told. Entries blocked by it come back.
    /// Any create: its id was made here, so a record under it is ours — one refused since (not in doubt) was applied
    /// under an earlier key on a history the server went back to. (Orders and devices, whose refused creates can
    /// hold later edits, go through `RecordRebase.settleCreates`, which keeps those.)
    /// Returns how many creates it settled.
    @discardableResult
    static func settleCreates(_ db: Database, collection: SyncCollection, ids: [String]) throws -> Int {
        var count = 0
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let settled = try String.fetchAll(
                db,
                sql: """
                    SELECT order_key FROM outbox WHERE collection = ? AND kind = 'create'
                    AND record_id IN (\(databaseQuestionMarks(count: chunk.count)))
                    """, arguments: StatementArguments([collection.name] + chunk))
            guard !settled.isEmpty else { continue }
            try db.execute(
                sql: """
                    DELETE FROM outbox WHERE collection = ? AND kind = 'create'
                    AND record_id IN (\(databaseQuestionMarks(count: chunk.count)))
                    """, arguments: StatementArguments([collection.name] + chunk))
            for key in settled { try unblock(db, key: key) }
            count += settled.count
        }
        return count
    }

    /// Messages the server shows: a create of ours under one of their ids, with the same ticket and content, reached
    /// the server (a create whose reply was lost) and is settled. One with another ticket or content is not ours to
    /// settle — a caller gave an id the server holds for another message (a server restore can bring one back after
    /// the id was seen gone): it stays, to be refused as `duplicate_id` and kept dead, visible (seed 50330: it was
    /// deleted with nothing to show for it). Returns how many creates it settled.
    @discardableResult
    static func settleMessageCreates(_ db: Database, messages: [TicketMessage]) throws -> Int {
        var count = 0
        for start in stride(from: 0, to: messages.count, by: 500) {
            let chunk = messages[start..<min(start + 500, messages.count)]
            let byId = Dictionary(chunk.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
            let creates = try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, record_id, fields FROM outbox WHERE collection = 'ticket_messages' AND kind = 'create'
                    AND record_id IN (\(databaseQuestionMarks(count: byId.count)))
                    """, arguments: StatementArguments(Array(byId.keys)))
            for create in creates {
                guard let server = byId[create["record_id"]] else { continue }
                let fields = try FieldValuesJSON.decode(create["fields"])
                guard fields["ticket_id"] == .some(server.ticketId), fields["content"] == .some(server.content) else {
                    continue
                }
                try remove(db, seq: create["seq"])
                count += 1
            }
        }
        return count
    }

    /// Queues a new ticket message; messages never coalesce and go in order per ticket.
    @discardableResult
    static func enqueueMessage(_ db: Database, message: TicketMessage, now: Timestamp) throws -> OutboxEntry {
        try insert(
            db, collection: .ticketMessages, id: message.id, orderKey: "tickets:\(message.ticketId)", kind: .create,
            fields: [
                "ticket_id": message.ticketId, "content": message.content,
                "is_internal": message.isInternal ? "true" : "false",
            ], now: now)
    }

    private static func insert(
        _ db: Database, collection: SyncCollection, id: String, orderKey: String, kind: OutboxEntry.Kind,
        fields: FieldValues, now: Timestamp, state: OutboxEntry.State = .pending
    ) throws -> OutboxEntry {
        let key = IdempotencyKey.next()
        try db.cachedStatement(
            sql: """
                INSERT INTO outbox (collection, record_id, order_key, kind, fields, idempotency_key, state, created_at,
                                    edited_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                collection.name, id, orderKey, kind.rawValue, FieldValuesJSON.encode(fields), key, state.rawValue,
                now.millisecondsSince1970, now.millisecondsSince1970,
            ])
        let seq = db.lastInsertedRowID
        return OutboxEntry(
            seq: seq, collection: collection, recordId: id, orderKey: orderKey, kind: kind,
            fields: fields, idempotencyKey: key, state: state, attempts: 0, createdAt: now, editedAt: now,
            priority: try priority(db, seq: seq))
    }

    /// The entries of one record, oldest first.
    static func entries(_ db: Database, collection: SyncCollection, id: String) throws -> [OutboxEntry] {
        // Most records have none (every change another program queues asks): a typed probe first, the entries'
        // columns only when there are some — a `Row` cursor maps all of their names before its first step, rows or
        // none.
        guard
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT seq FROM outbox WHERE collection = ? AND record_id = ? LIMIT 1"),
                arguments: [collection.name, id]) != nil
        else { return [] }
        return try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT \(columns) FROM outbox WHERE collection = ? AND record_id = ? ORDER BY seq"),
            arguments: [collection.name, id]
        ).map(entry)
    }

    static func entry(_ db: Database, seq: Int64) throws -> OutboxEntry? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(columns) FROM outbox WHERE seq = ?"), arguments: [seq]).map(
            entry)
    }

    /// Every entry, oldest first.
    static func all(_ db: Database) throws -> [OutboxEntry] {
        try Row.fetchAll(db, sql: "SELECT \(columns) FROM outbox ORDER BY seq").map(entry)
    }

    /// How many entries one record has.
    static func entryCount(_ db: Database, collection: SyncCollection, id: String) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM outbox WHERE collection = ? AND record_id = ?",
            arguments: [collection.name, id]) ?? 0
    }

    /// The ids (of `collection`) in `ids` that have entries.
    static func recordsWithEntries(_ db: Database, collection: SyncCollection, ids: [String]) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let placeholders = databaseQuestionMarks(count: ids.count)
        return Set(
            try String.fetchAll(
                db,
                sql: "SELECT DISTINCT record_id FROM outbox WHERE collection = ? AND record_id IN (\(placeholders))",
                arguments: StatementArguments([collection.name] + ids)))
    }

    /// The entries that may be sent now: per order key, the oldest entry that is not dead or held, if it is due.
    /// An entry that waits for a retry keeps the entries behind it (same record or ticket) waiting too, so that
    /// they never overtake it; entries of other records go ahead. A record created here sends nothing but its create
    /// until the server has it (whatever state the create is in), and a create whose parent was created here waits
    /// until the parent's create is acknowledged: parents reach the server before their children.
    ///
    /// A retry time more than `horizon` ahead was stored before the wall clock was set back: due now.
    ///
    /// Most urgent first (`PushPriority`), then by seq, at most `limit`: an entry goes in the class of the most
    /// urgent change that waits for it — behind it in its order key, or a child's create — so that nothing urgent
    /// waits behind a note of the same record. `excluding`: entries the caller is sending already.
    static func due(
        _ db: Database, now: Timestamp, horizon: Duration, limit: Int = Int.max, excluding: Set<Int64> = []
    ) throws -> [(entry: OutboxEntry, urgency: PushPriority)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(columns),
                    min(
                        (SELECT min(behind.priority) FROM outbox behind
                         WHERE behind.order_key = o.order_key AND behind.state IN ('pending', 'failed', 'in_flight')),
                        coalesce((SELECT min(child.priority) FROM outbox child
                                  WHERE child.depends_on = o.order_key AND child.state IN ('pending', 'failed', 'in_flight')), 2)
                    ) AS urgency
                FROM outbox o
                WHERE state IN ('pending', 'failed', 'in_flight')
                  AND NOT EXISTS (
                    SELECT 1 FROM outbox earlier
                    WHERE earlier.order_key = o.order_key AND earlier.seq < o.seq
                      AND earlier.state IN ('pending', 'failed', 'in_flight'))
                  AND NOT EXISTS (
                    SELECT 1 FROM outbox create_first
                    WHERE create_first.order_key = o.order_key AND create_first.seq < o.seq
                      AND create_first.kind = 'create' AND create_first.record_id = o.record_id)
                  AND (o.depends_on IS NULL OR NOT EXISTS (
                    SELECT 1 FROM outbox parent WHERE parent.order_key = o.depends_on AND parent.kind = 'create'))
                  AND (next_attempt_at IS NULL OR next_attempt_at <= ? OR next_attempt_at > ?)
                  AND o.seq NOT IN (SELECT value FROM json_each(?))
                ORDER BY urgency, seq
                LIMIT ?
                """,
            arguments: [
                now.millisecondsSince1970, now.millisecondsSince1970 + horizon.inMilliseconds,
                "[" + excluding.map(String.init).joined(separator: ",") + "]", limit,
            ]
        ).map { row in (try entry(row), PushPriority(rawValue: row["urgency"]) ?? .normal) }
    }

    /// When the earliest change waiting to be sent is due (nil: none waits), so the scheduler can come back then
    /// instead of at the next periodic run: `now` when one is due already — a change a run's pull made due after its
    /// push (a rebase rewrites a failed entry with no retry time) goes at once, not 15 minutes later — else the
    /// earliest retry time. Judged as `due` judges (an entry waiting behind another, or for a create, is not due),
    /// so a run never plans another for a change that cannot go.
    static func nextAttemptAt(_ db: Database, now: Timestamp, horizon: Duration) throws -> Timestamp? {
        if try !due(db, now: now, horizon: horizon, limit: 1).isEmpty { return now }
        return try Int64.fetchOne(
            db,
            sql:
                "SELECT MIN(next_attempt_at) FROM outbox WHERE state IN ('pending', 'failed') AND next_attempt_at IS NOT NULL"
        ).map { Timestamp(millisecondsSince1970: $0) }
    }

    static func setState(_ db: Database, seq: Int64, _ state: OutboxEntry.State) throws {
        try db.cachedStatement(sql: "UPDATE outbox SET state = ? WHERE seq = ?").execute(arguments: [
            state.rawValue, seq,
        ])
    }

    /// The entry is about to be sent: in flight, and in doubt from now on (`sent`), until a final answer for its
    /// key is known. Committed before the request leaves, so a crash at any later point leaves it in doubt.
    static func markSending(_ db: Database, seq: Int64) throws {
        try db.cachedStatement(sql: "UPDATE outbox SET state = 'in_flight', sent = 1 WHERE seq = ?")
            .execute(arguments: [seq])
    }

    /// Records a transient failure: retried at `nextAttempt`, or dead when `nextAttempt` is nil — less the fields a
    /// later edit of the record has replaced meanwhile, as a refused change (that later edit may go, and be
    /// acknowledged, before anyone retries this one). The key stays as it was (in doubt when it was sent): the retry
    /// replays it.
    static func recordFailure(
        _ db: Database, seq: Int64, error: String, nextAttempt: Timestamp?, countsAsAttempt: Bool = true
    ) throws {
        try db.execute(
            sql: """
                UPDATE outbox SET state = ?, attempts = attempts + ?, next_attempt_at = ?, last_error = ?
                WHERE seq = ?
                """,
            arguments: [
                nextAttempt == nil ? "dead" : "failed", countsAsAttempt ? 1 : 0,
                nextAttempt?.millisecondsSince1970, error, seq,
            ])
        if nextAttempt == nil {
            try blockDependents(db, seq: seq)
            try dropSuperseded(db, seq: seq)
        }
    }

    /// The server refused the change for good (a final answer for its key: it was not applied). Dead, no longer in
    /// doubt, with the reason — less the fields a later edit of the record has replaced meanwhile.
    static func reject(_ db: Database, seq: Int64, error: String) throws {
        try db.execute(
            sql: """
                UPDATE outbox SET state = 'dead', sent = 0, attempts = attempts + 1, next_attempt_at = NULL,
                    last_error = ? WHERE seq = ?
                """, arguments: [error, seq])
        try blockDependents(db, seq: seq)
        try dropSuperseded(db, seq: seq)
    }

    /// A later edit of a field replaces an earlier value that is still in the outbox. `enqueueUpdate` removes it from
    /// the record's dead and held entries at once; an entry that was being sent then could not be touched (its key
    /// may only be replayed with its body), so when it dies, and again when it is revived, the fields a later entry
    /// of the record sets are dropped from it: a `retry` must never send an older value after a newer one. An entry
    /// left with no field goes.
    static func dropSuperseded(_ db: Database, seq: Int64) throws {
        guard let entry = try entry(db, seq: seq), entry.kind == .update else { return }
        let replaced = Set(
            try entries(db, collection: entry.collection, id: entry.recordId)
                .filter { $0.seq > entry.seq && $0.kind == .update }.flatMap(\.fields.keys))
        let remaining = entry.fields.filter { !replaced.contains($0.key) }
        guard remaining.count != entry.fields.count else { return }
        try BaseCopies.rememberGoneInDoubt(db, entry)
        if remaining.isEmpty {
            try remove(db, seq: seq)
        } else {
            try rewrite(db, entry, fields: remaining)
        }
    }

    static func remove(_ db: Database, seq: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM outbox WHERE seq = ?").execute(arguments: [seq])
    }

    static func removeAll(_ db: Database, collection: SyncCollection, id: String) throws {
        try db.execute(
            sql: "DELETE FROM outbox WHERE collection = ? AND record_id = ?", arguments: [collection.name, id])
    }

    /// Rewrites an entry's fields after a rebase. An entry that was ever sent gets a new idempotency key (no longer
    /// in doubt): its old key belongs to a request whose outcome the rebase has just taken into account, and the
    /// rebased change is a different request (docs/api.md section 5).
    static func rewrite(_ db: Database, _ entry: OutboxEntry, fields: FieldValues, state: OutboxEntry.State? = nil)
        throws
    {
        let key = entry.sent || entry.state == .inFlight ? IdempotencyKey.next() : entry.idempotencyKey
        try db.execute(
            sql: """
                UPDATE outbox SET fields = ?, idempotency_key = ?, sent = 0, state = ?, next_attempt_at = NULL
                WHERE seq = ?
                """,
            arguments: [
                FieldValuesJSON.encode(fields), key,
                (state ?? (entry.state == .inFlight ? .pending : entry.state)).rawValue, entry.seq,
            ])
    }

    /// A dead entry goes out again. One the server refused goes as a new request (new key, against the base of the
    /// moment it is sent); one that died in doubt keeps its key, so a replay tells whether it was applied.
    /// A create brings back the entries that were dead because of it.
    static func revive(_ db: Database, _ entry: OutboxEntry) throws {
        try dropSuperseded(db, seq: entry.seq)
        guard let entry = try self.entry(db, seq: entry.seq) else { return }
        try db.execute(
            sql: """
                UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = NULL, last_error = NULL,
                    blocked_by = NULL, idempotency_key = ? WHERE seq = ?
                """, arguments: [entry.sent ? entry.idempotencyKey : IdempotencyKey.next(), entry.seq])
        if entry.kind == .create { try unblock(db, key: entry.orderKey) }
    }

    /// After a restart, entries that were being sent are pending again, still in doubt: sent again with the same key.
    static func recoverInFlight(_ db: Database) throws {
        try db.execute(sql: "UPDATE outbox SET state = 'pending' WHERE state = 'in_flight'")
    }

    // MARK: Conditions for statements on other tables

    /// An SQL condition for a statement on another table (retention, a resync's sweep): the record named by the SQL
    /// expressions `collection` and `recordId` of that statement has an entry — a create, with `kind`. The outbox is
    /// aliased `queued`, a name the outer statement must not use.
    ///
    /// ```swift
    /// Outbox.hasEntrySQL(collection: "'orders'", recordId: "o.id")
    /// // EXISTS (SELECT 1 FROM outbox queued WHERE queued.collection = 'orders' AND queued.record_id = o.id)
    /// ```
    static func hasEntrySQL(collection: String, recordId: String, kind: OutboxEntry.Kind? = nil) -> String {
        "EXISTS (SELECT 1 FROM outbox queued WHERE queued.collection = \(collection) AND queued.record_id = \(recordId)"
            + (kind.map { " AND queued.kind = '\($0.rawValue)'" } ?? "") + ")"
    }

    /// An SQL condition for a statement on another table: entries with the order key the SQL expression `orderKey`
    /// gives exist (a ticket's new messages: `'tickets:' || t.id`). The outbox is aliased `queued`.
    static func hasEntrySQL(orderKey: String) -> String {
        "EXISTS (SELECT 1 FROM outbox queued WHERE queued.order_key = \(orderKey))"
    }

    struct Counts: Sendable, Hashable {
        var pending = 0
        var failed = 0
        var dead = 0
        var held = 0
        var total: Int { pending + failed + dead + held }
        /// Changes still to reach the server: every entry but the dead ones (which never will).
        var notOnServer: Int { total - dead }
    }

    /// The entries by state, from the counts the outbox's triggers keep (`outbox_counts`): five rows, whatever the
    /// outbox holds.
    static func counts(_ db: Database) throws -> Counts {
        var counts = Counts()
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT state, entries AS n FROM outbox_counts")) {
            let n: Int = row["n"]
            switch OutboxEntry.State(rawValue: row["state"]) {
            case .pending?, .inFlight?: counts.pending += n
            case .failed?: counts.failed += n
            case .dead?: counts.dead += n
            case .held?: counts.held += n
            case nil: break
            }
        }
        return counts
    }
}
