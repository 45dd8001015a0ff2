internal import Foundation
internal import GRDB
internal import RepairSyncModels
internal import Synchronization

/// The development backend's own storage (independent of the daemon's replica): every record as its JSON body,
/// with a global commit sequence number that orders the changes feeds.
///
/// Each write takes the next sequence number inside its transaction, and GRDB serialises writes, so sequence order
/// is commit order and any read snapshot holds a prefix of it: a feed reader can never skip a change that commits
/// later with a smaller number.
final class BackendStore: Sendable {
    let pool: DatabasePool
    let counters = DevCounters()
    /// The first changes page served for each collection (for the `stale_page` fault).
    let firstPages = Mutex<[SyncCollection: Data]>([:])
    /// Every committed change, for `GET /api/v1/events`.
    let events = ChangeEventHub()

    init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS records (
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        parent_id TEXT,
                        created_at TEXT NOT NULL,
                        amount TEXT,
                        body BLOB NOT NULL,
                        PRIMARY KEY (collection, id)
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX IF NOT EXISTS records_feed ON records(collection, seq);
                    CREATE INDEX IF NOT EXISTS records_parent ON records(collection, parent_id);
                    CREATE INDEX IF NOT EXISTS records_created ON records(collection, created_at);
                    CREATE TABLE IF NOT EXISTS tombstones (
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        deleted_at TEXT NOT NULL,
                        PRIMARY KEY (collection, id)
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX IF NOT EXISTS tombstones_feed ON tombstones(collection, seq);
                    CREATE TABLE IF NOT EXISTS idempotency (
                        token TEXT NOT NULL,
                        key TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        status INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (token, key)
                    ) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
                    INSERT OR IGNORE INTO meta (key, value) VALUES ('seq', 0), ('cursor_epoch', 1);
                    -- What each record created through the API was created with (docs/api.md section 4.7): a
                    -- repeated id with the same body answers the record, with another body 409.
                    CREATE TABLE IF NOT EXISTS creations (
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        PRIMARY KEY (collection, id)
                    ) WITHOUT ROWID;
                    """)
            // The highest order number given or stored, for the numbers of new orders (a file from before creates
            // has none yet: taken from its orders once).
            if try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'max_order_number'") == nil {
                var highest = 0
                let bodies = try Data.fetchCursor(db, sql: "SELECT body FROM records WHERE collection = 'orders'")
                while let body = try bodies.next() {
                    let order = try BackendJSON.decoder().decode(Order.self, from: body)
                    if let number = order.orderNumber { highest = max(highest, number) }
                }
                try db.execute(
                    sql: "INSERT INTO meta (key, value) VALUES ('max_order_number', ?)", arguments: [highest])
            }
        }
        events.rebase(
            head: try pool.read { db in try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seq'") ?? 0 })
    }

    // MARK: - Sequence and cursors

    /// Announces a change on the event stream once its transaction commits (in commit order; nothing on rollback).
    func announce(_ collection: SyncCollection, sequence: Int64, _ db: Database) {
        let events = events
        db.afterNextTransaction { _ in events.publish(.init(id: sequence, collection: collection)) }
    }

    func nextSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "UPDATE meta SET value = value + 1 WHERE key = 'seq' RETURNING value")!
    }

    func cursorEpoch(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'cursor_epoch'")!
    }

    /// Makes every cursor issued so far answer 410.
    func expireCursors() async throws {
        try await pool.write { db in try db.execute(sql: "UPDATE meta SET value = value + 1 WHERE key = 'cursor_epoch'")
        }
    }

    // MARK: - Records

    func load<R: StoredRecord>(_ type: R.Type, id: String, _ db: Database) throws -> R? {
        guard
            let body = try Data.fetchOne(
                db, sql: "SELECT body FROM records WHERE collection = ? AND id = ?",
                arguments: [R.collection.name, id])
        else { return nil }
        return try BackendJSON.decoder().decode(R.self, from: body)
    }

    /// Stores a record at the end of its feed (a new sequence number) and removes any tombstone of its id.
    @discardableResult
    func save<R: StoredRecord>(_ record: R, _ db: Database, sequence: Int64? = nil) throws -> Data {
        let seq = try sequence ?? nextSequence(db)
        let body = try BackendJSON.encoder().encode(record)
        try db.cachedStatement(
            sql: """
                INSERT INTO records (collection, id, seq, version, parent_id, created_at, amount, body)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (collection, id) DO UPDATE SET seq = excluded.seq, version = excluded.version,
                    parent_id = excluded.parent_id, created_at = excluded.created_at, amount = excluded.amount,
                    body = excluded.body
                """
        ).execute(arguments: [
            R.collection.name, record.id, seq, record.version, record.parentId, record.createdAt.rfc3339,
            record.amount?.canonicalText, body,
        ])
        if sequence == nil {
            try db.execute(
                sql: "DELETE FROM tombstones WHERE collection = ? AND id = ?",
                arguments: [R.collection.name, record.id])
            announce(R.collection, sequence: seq, db)
        }
        if let number = (record as? Order)?.orderNumber {
            try db.cachedStatement(sql: "UPDATE meta SET value = max(value, ?) WHERE key = 'max_order_number'")
                .execute(arguments: [number])
        }
        return body
    }

    /// Deletes a record and, recursively, its children; each leaves a tombstone. Returns what was deleted.
    func delete(_ collection: SyncCollection, id: String, _ db: Database) throws -> [(SyncCollection, String)] {
        guard
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM records WHERE collection = ? AND id = ?", arguments: [collection.name, id])
                != nil
        else { return [] }
        var deleted: [(SyncCollection, String)] = []
        for child in collection.children {
            let childIds = try String.fetchAll(
                db, sql: "SELECT id FROM records WHERE collection = ? AND parent_id = ? ORDER BY seq",
                arguments: [child.name, id])
            for childId in childIds { deleted += try delete(child, id: childId, db) }
        }
        try db.execute(
            sql: "DELETE FROM records WHERE collection = ? AND id = ?", arguments: [collection.name, id])
        let sequence = try nextSequence(db)
        try db.execute(
            sql: """
                INSERT INTO tombstones (collection, id, seq, deleted_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (collection, id) DO UPDATE SET seq = excluded.seq, deleted_at = excluded.deleted_at
                """,
            arguments: [collection.name, id, sequence, Timestamp.now().rfc3339])
        announce(collection, sequence: sequence, db)
        deleted.append((collection, id))
        return deleted
    }

    func recordBody(_ collection: SyncCollection, id: String) async throws -> Data? {
        try await pool.read { db in
            try Data.fetchOne(
                db, sql: "SELECT body FROM records WHERE collection = ? AND id = ?", arguments: [collection.name, id])
        }
    }

    // MARK: - Changes feed

    /// One page of a collection's changes after `cursor`: records and tombstones merged in sequence order.
    /// The body is assembled from the stored JSON bodies without decoding them.
    func changesPage(_ collection: SyncCollection, cursor cursorText: String?, limit: Int) async throws -> BackendReply
    {
        try await pool.read { db in
            let epoch = try cursorEpoch(db)
            var after: Int64 = 0
            if let cursorText {
                let maxSequence = try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seq'") ?? 0
                guard let cursor = FeedCursor(encoded: cursorText), cursor.collection == collection,
                    cursor.epoch == epoch, cursor.sequence <= maxSequence
                else {
                    return .error(
                        410, "cursor_expired",
                        "the cursor is unknown or has expired; resync \(collection.name) from the beginning")
                }
                after = cursor.sequence
            }
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT seq, id, body, NULL AS deleted_at FROM records WHERE collection = ?1 AND seq > ?2
                        UNION ALL
                        SELECT seq, id, NULL, deleted_at FROM tombstones WHERE collection = ?1 AND seq > ?2
                        ORDER BY seq LIMIT ?3
                        """),
                arguments: [collection.name, after, limit + 1])
            let hasMore = rows.count > limit
            let page = rows.prefix(limit)
            var body = Data()
            body.reserveCapacity(page.count * 600 + 200)
            body.append(contentsOf: #"{"data":["#.utf8)
            var tombstones: [Tombstone] = []
            var first = true
            var last = after
            for row in page {
                last = row[0]
                if let recordBody = row[2] as Data? {
                    if !first { body.append(UInt8(ascii: ",")) }
                    first = false
                    body.append(recordBody)
                } else {
                    tombstones.append(
                        Tombstone(id: row[1], deletedAt: Timestamp(rfc3339: row[3] as String) ?? .now()))
                }
            }
            body.append(contentsOf: #"],"deleted":"#.utf8)
            body.append(try BackendJSON.encoder().encode(tombstones))
            let next = FeedCursor(collection: collection, epoch: epoch, sequence: last).encoded
            body.append(contentsOf: #","next_cursor":"\#(next)","has_more":\#(hasMore)}"#.utf8)
            return BackendReply(status: 200, body: body)
        }
    }

    // MARK: - Idempotency

    /// Runs `operation` once per (token, key): a repeated key with the same request replays the stored reply; with a
    /// different request it is refused. Must be called inside a write transaction, so check, operation and record
    /// commit together.
    func idempotent(
        _ db: Database, token: String, key: String?, fingerprint: String, operation: () throws -> BackendReply
    ) throws -> BackendReply {
        guard let key else { return try operation() }
        if let stored = try Row.fetchOne(
            db, sql: "SELECT fingerprint, status, body FROM idempotency WHERE token = ? AND key = ?",
            arguments: [token, key])
        {
            guard stored["fingerprint"] as String == fingerprint else {
                return .error(
                    422, "idempotency_key_reused", "this Idempotency-Key was used for a different request",
                    field: "Idempotency-Key")
            }
            counters.update { $0.idempotentReplays += 1 }
            return BackendReply(status: stored["status"], body: stored["body"], replayed: true)
        }
        let reply = try operation()
        if reply.isFinal {
            try db.execute(
                sql: "INSERT INTO idempotency (token, key, fingerprint, status, body) VALUES (?, ?, ?, ?, ?)",
                arguments: [token, key, fingerprint, reply.status, reply.body])
        }
        return reply
    }

    // MARK: - Counts

    struct Counts: Sendable {
        var records: [SyncCollection: Int]
        var tombstones: [SyncCollection: Int]
        var maxSequence: Int64
    }

    func counts() async throws -> Counts {
        try await pool.read { db in
            var records: [SyncCollection: Int] = [:]
            var tombstones: [SyncCollection: Int] = [:]
            for collection in SyncCollection.allCases {
                records[collection] = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM records WHERE collection = ?", arguments: [collection.name])
                tombstones[collection] = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM tombstones WHERE collection = ?", arguments: [collection.name])
            }
            let maxSequence = try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seq'") ?? 0
            return Counts(records: records, tombstones: tombstones, maxSequence: maxSequence)
        }
    }
}

/// FNV-1a over the request's method, path and body: what makes two requests "the same" for an Idempotency-Key.
/// A JSON body is compared as JSON (key order and whitespace do not matter): a client may re-encode a retried
/// request with a serializer that orders keys differently.
func requestFingerprint(method: String, path: String, body: Data) -> String {
    let canonical =
        (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])).flatMap {
            try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .fragmentsAllowed])
        } ?? body
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in Array(method.utf8) + [0] + Array(path.utf8) + [0] + Array(canonical) {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }
    return String(hash, radix: 16)
}
