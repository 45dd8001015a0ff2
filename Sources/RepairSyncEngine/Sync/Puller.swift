internal import Foundation
internal import GRDB
internal import Logging
internal import RepairSyncModels
internal import RepairSyncStore

/// Follows each collection's changes feed from its stored cursor. Every page is applied in one transaction with
/// its new cursor, so a crash resumes at the last committed page; a page that does not decode commits nothing.
struct Puller {
    let store: ReplicaStore
    let api: APIClient
    let configuration: EngineConfiguration
    let clock: any EngineClock
    let logger: Logger
    let events: EngineEvents
    let stopFlag: StopFlag

    struct Report {
        var records: [SyncCollection: Int] = [:]
        var deleted = 0
        var conflicts = 0
    }

    /// Pulls `collections` in order. `report` holds what was committed even when the run stops early.
    func run(
        _ collections: [SyncCollection], into report: inout Report, progress: @Sendable (Double) async -> Void
    ) async throws(SyncStop) {
        for (index, collection) in collections.enumerated() {
            try await pull(collection, into: &report) { fraction in
                await progress((Double(index) + fraction) / Double(collections.count))
            }
            await progress(Double(index + 1) / Double(collections.count))
        }
    }

    /// A page fetched and decoded, or why not.
    private enum Fetched: Sendable {
        case page(DecodedPage)
        /// The request failed (HTTP error, connection, 410).
        case requestFailed(APIError)
        /// The page arrived but does not decode: nothing of it may be written.
        case malformed(APIError)
    }

    /// A decoded changes page of one collection.
    private enum DecodedPage: Sendable {
        case clients(ChangesPage<Client>)
        case tickets(ChangesPage<Ticket>)
        case ticketMessages(ChangesPage<TicketMessage>)
        case orders(ChangesPage<Order>)
        case devices(ChangesPage<Device>)

        var nextCursor: String {
            switch self {
            case .clients(let page): page.nextCursor
            case .tickets(let page): page.nextCursor
            case .ticketMessages(let page): page.nextCursor
            case .orders(let page): page.nextCursor
            case .devices(let page): page.nextCursor
            }
        }

        var hasMore: Bool {
            switch self {
            case .clients(let page): page.hasMore
            case .tickets(let page): page.hasMore
            case .ticketMessages(let page): page.hasMore
            case .orders(let page): page.hasMore
            case .devices(let page): page.hasMore
            }
        }
    }

    /// Requests the page after `cursor` and decodes it (off the writer: decoding page n+1 overlaps applying page n).
    private func fetch(_ collection: SyncCollection, cursor: String?) async -> Fetched {
        let reply: APIClient.Reply
        do {
            reply = try await api.changes(collection, cursor: cursor, limit: configuration.pageSize)
        } catch {
            return .requestFailed(error)
        }
        do {
            switch collection {
            case .clients: return .page(.clients(try api.decode(ChangesPage<Client>.self, reply.body)))
            case .tickets: return .page(.tickets(try api.decode(ChangesPage<Ticket>.self, reply.body)))
            case .ticketMessages:
                return .page(.ticketMessages(try api.decode(ChangesPage<TicketMessage>.self, reply.body)))
            case .orders: return .page(.orders(try api.decode(ChangesPage<Order>.self, reply.body)))
            case .devices: return .page(.devices(try api.decode(ChangesPage<Device>.self, reply.body)))
            }
        } catch {
            return .malformed(error)
        }
    }

    /// Follows one collection's feed to its end. While page n is applied (in its transaction, with its cursor), page
    /// n+1 is already requested and decoded — at most one page ahead, so memory stays bounded. A page is applied
    /// only after every page before it committed, so the stored cursor always names the last committed page.
    private func pull(
        _ collection: SyncCollection, into report: inout Report, progress: @Sendable (Double) async -> Void
    ) async throws(SyncStop) {
        var restarted = false
        var pages = 0
        resync: while true {
            try stopFlag.check()
            let cursor: String?
            do {
                cursor = try await store.read { db in
                    try String.fetchOne(
                        db, sql: "SELECT cursor FROM sync_metadata WHERE collection = ?", arguments: [collection.name])
                }
            } catch {
                throw .failed("store: \(error)")
            }
            var fetched = await fetch(collection, cursor: cursor)
            while true {
                let page: DecodedPage
                switch fetched {
                case .page(let decoded):
                    page = decoded
                case .requestFailed(let error) where error.status == 410 && !restarted:
                    // The server cannot resume from this cursor: resync the collection from the beginning (once).
                    restarted = true
                    logger.warning(
                        "cursor expired; resyncing from the beginning", metadata: ["collection": "\(collection)"])
                    try await recordState(collection, cursor: .some(nil), state: .initial, error: "cursor expired (410)")
                    events.emit(.cursorReset(collection: collection))
                    continue resync
                case .requestFailed(let error):
                    try await recordState(collection, cursor: nil, state: .error, error: error.description)
                    throw SyncStop.from(error)
                case .malformed(let error):
                    try await recordState(collection, cursor: nil, state: .error, error: error.description)
                    throw .failed("\(collection): \(error)")
                }
                let applied: (records: Int, deleted: Int, conflicts: Int, hasMore: Bool)
                if page.hasMore && !stopFlag.isSet {
                    async let ahead = fetch(collection, cursor: page.nextCursor)
                    applied = try await apply(collection, page)
                    fetched = await ahead
                } else {
                    applied = try await apply(collection, page)
                }
                pages += 1
                report.records[collection, default: 0] += applied.records
                report.deleted += applied.deleted
                report.conflicts += applied.conflicts
                events.emit(
                    .pageApplied(
                        collection: collection, records: applied.records, deleted: applied.deleted,
                        hasMore: applied.hasMore))
                // Pages of unknown number: approach 1 without reaching it until the feed is caught up.
                await progress(applied.hasMore ? 1 - 1 / Double(pages + 1) : 1)
                if !applied.hasMore { return }
                // A stop ends the run here: the page fetched ahead is dropped, its cursor was never stored.
                try stopFlag.check()
            }
        }
    }

    private func apply(_ collection: SyncCollection, _ page: DecodedPage) async throws(SyncStop)
        -> (records: Int, deleted: Int, conflicts: Int, hasMore: Bool)
    {
        do {
            switch page {
            case .clients(let page): return try await applyPlain(page)
            case .tickets(let page): return try await applyPlain(page)
            case .ticketMessages(let page): return try await applyPlain(page)
            case .orders(let page): return try await applyEditable(page)
            case .devices(let page): return try await applyEditable(page)
            }
        } catch {
            throw .failed("\(collection): store: \(error)")
        }
    }

    private func recordState(
        _ collection: SyncCollection, cursor: String??, state: SyncMetadata.State, error: String?
    ) async throws(SyncStop) {
        let now = clock.now()
        do {
            try await store.write { db in
                if let cursor {
                    try db.execute(
                        sql: "UPDATE sync_metadata SET cursor = ? WHERE collection = ?",
                        arguments: [cursor, collection.name])
                }
                try db.execute(
                    sql: "UPDATE sync_metadata SET state = ?, last_error = ?, last_synced_at = ? WHERE collection = ?",
                    arguments: [state.rawValue, error, now, collection.name])
            }
        } catch {
            throw .failed("store: \(error)")
        }
    }

    /// Collections without local edits: the server copy is the row. New messages the server already has are no
    /// longer pending (a create whose reply was lost).
    private func applyPlain<R: ReplicaRecord>(_ page: ChangesPage<R>) async throws
        -> (records: Int, deleted: Int, conflicts: Int, hasMore: Bool)
    {
        events.emit(.pageReceived(collection: R.collection, records: page.data.count, deleted: page.deleted.count))
        let now = clock.now()
        let policy = configuration.policy(for: R.collection).rawValue
        let conflicts = try await store.write { db -> Int in
            try db.upsert(page.data, syncedAt: now)
            if R.collection == .ticketMessages, !page.data.isEmpty {
                try db.execute(
                    sql: """
                        DELETE FROM outbox WHERE collection = 'ticket_messages' AND kind = 'create'
                        AND record_id IN (\(databaseQuestionMarks(count: page.data.count)))
                        """, arguments: StatementArguments(page.data.map(\.id)))
            }
            var conflicts = 0
            for tombstone in page.deleted {
                conflicts += try deleteWithPendingChildren(R.collection, id: tombstone.id, policy: policy, now: now, db)
            }
            try saveCursor(R.collection, page, now: now, db)
            return conflicts
        }
        return (page.data.count, page.deleted.count, conflicts, page.hasMore)
    }

    private func applyEditable<R: EditableRecord>(_ page: ChangesPage<R>) async throws
        -> (records: Int, deleted: Int, conflicts: Int, hasMore: Bool)
    {
        events.emit(.pageReceived(collection: R.collection, records: page.data.count, deleted: page.deleted.count))
        let now = clock.now()
        let policy = configuration.policy(for: R.collection)
        let rebase = RecordRebase(
            policy: policy, clockOffsetMilliseconds: api.clockOffsetMilliseconds, now: now,
            cipher: configuration.passcodeCipher)
        let conflicts = try await store.write { db -> Int in
            var conflicts = 0
            // One query for the page instead of one per record: most records have no local change.
            let changed = try Outbox.recordsWithEntries(db, collection: R.collection, ids: page.data.map(\.id))
            for record in page.data {
                if try rebase.apply(record, db, mayHaveEntries: changed.contains(record.id)).conflict != nil {
                    conflicts += 1
                }
            }
            for tombstone in page.deleted {
                conflicts += try deleteWithPendingChildren(
                    R.collection, id: tombstone.id, policy: policy.rawValue, now: now, db)
            }
            try saveCursor(R.collection, page, now: now, db)
            return conflicts
        }
        return (page.data.count, page.deleted.count, conflicts, page.hasMore)
    }

    /// Deletes a record the server deleted, and its children; pending changes of any of them go to the conflict
    /// log first. Returns how many pending records were affected.
    private func deleteWithPendingChildren(
        _ collection: SyncCollection, id: String, policy: String, now: Timestamp, _ db: Database
    ) throws -> Int {
        var children: [(SyncCollection, String)] = []
        switch collection {
        case .orders:
            children = try String.fetchAll(
                db, sql: "SELECT DISTINCT record_id FROM outbox WHERE collection = 'devices' AND record_id IN (SELECT id FROM devices WHERE order_id = ?)",
                arguments: [id]
            ).map { (.devices, $0) }
        case .tickets:
            children = try String.fetchAll(
                db, sql: "SELECT DISTINCT record_id FROM outbox WHERE collection = 'ticket_messages' AND order_key = ?",
                arguments: ["tickets:\(id)"]
            ).map { (.ticketMessages, $0) }
        default: break
        }
        var affected = 0
        for (childCollection, childId) in children {
            try RecordRebase.deletedRemotely(db, collection: childCollection, id: childId, policy: policy, now: now)
            affected += 1
        }
        let pending = try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM outbox WHERE collection = ? AND record_id = ?",
            arguments: [collection.name, id]) ?? 0
        try RecordRebase.deletedRemotely(db, collection: collection, id: id, policy: policy, now: now)
        return affected + (pending > 0 ? 1 : 0)
    }

    private func saveCursor<R: SyncRecord>(_ collection: SyncCollection, _ page: ChangesPage<R>, now: Timestamp, _ db: Database)
        throws
    {
        try db.execute(
            sql: """
                UPDATE sync_metadata SET cursor = ?, state = ?, last_synced_at = ?, last_error = NULL,
                    last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END
                WHERE collection = ?
                """,
            arguments: [
                page.nextCursor, page.hasMore ? "pulling" : "idle", now, !page.hasMore, now, collection.name,
            ])
    }
}
