internal import Foundation
internal import GRDB
internal import Logging
internal import RepairSyncModels
internal import RepairSyncStore

/// Follows each collection's changes feed from its stored cursor. Every page is applied in one transaction with
/// its new cursor, so a crash resumes at the last committed page; a page that does not decode commits nothing.
///
/// Against a server that does not keep the contract, every loop is bounded and every failure stays with its
/// collection: a feed that does not advance stops after `maxStalledPages`, a pull never takes more than
/// `maxPagesPerRun` pages, and one collection's failure (a malformed page, a stuck feed, a 5xx) is recorded in its
/// status while the others still pull. Only what concerns the whole run — offline, a token refused, a server asking
/// to wait, a stop — ends the run.
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
        /// Collections whose pull failed in this run, with why.
        var failed: [SyncCollection: String] = [:]
        /// Copies older than the replica's that the server confirmed as its current record (history went back).
        var rewound = 0
        /// Copies older than the replica's that were stale (ignored).
        var stale = 0
        /// Collections whose number of rows may have changed (a record new to the replica, a deletion): the status
        /// recounts only these, so a run that only updates records costs nothing per record the store holds.
        var resized: Set<SyncCollection> = []
        /// Creates in doubt that the pages settled (the server showed their records): what waited for them is due.
        var settledCreates = 0
    }

    /// Pulls `collections` in order. `report` holds what was committed even when the run stops early.
    func run(
        _ collections: [SyncCollection], into report: inout Report, progress: @Sendable (Double) async -> Void
    ) async throws(SyncStop) {
        for (index, collection) in collections.enumerated() {
            await startBulkLoadIfEmpty(collection)
            var endsRun: SyncStop?
            do {
                try await pull(collection, into: &report) { fraction in
                    await progress((Double(index) + fraction) / Double(collections.count))
                }
            } catch  where error.endsRun {
                endsRun = error
            } catch {
                // This collection's failure is in its status; the others still pull.
                report.failed[collection] = error.description
                logger.error("pull failed", metadata: ["collection": "\(collection)", "error": "\(error)"])
            }
            // However the pull ended (and after a load a crash interrupted), the lists get their indexes back.
            await buildListIndexes(collection)
            if let endsRun { throw endsRun }
            await progress(Double(index + 1) / Double(collections.count))
        }
    }

    /// The first pull into an empty table loads it without its list indexes (`ListIndexes`): they are built once,
    /// at the end, instead of being updated record by record in feed order. A failure here only costs speed.
    private func startBulkLoadIfEmpty(_ collection: SyncCollection) async {
        do {
            let fromTheBeginning = try await store.read { db in
                try String.fetchOne(
                    db, sql: "SELECT cursor FROM sync_metadata WHERE collection = ?", arguments: [collection.name])
                    == nil
            }
            guard fromTheBeginning else { return }
            if try await store.write({ db in try ListIndexes.dropForBulkLoad(on: collection.name, db) }) {
                logger.info("loading in bulk: list indexes built at the end", metadata: ["collection": "\(collection)"])
            }
        } catch {
            logger.warning(
                "list indexes kept for the load", metadata: ["collection": "\(collection)", "error": "\(error)"])
        }
    }

    /// Builds the list indexes `collection`'s table lacks (after a load in bulk, or one a crash interrupted).
    private func buildListIndexes(_ collection: SyncCollection) async {
        do {
            guard try await !store.read({ db in try ListIndexes.missing(on: collection.name, db) }).isEmpty else {
                return
            }
            let start = ContinuousClock.now
            let built = try await store.write { db in try ListIndexes.create(on: collection.name, db) }
            logger.info(
                "list indexes built",
                metadata: [
                    "collection": "\(collection)", "indexes": "\(built.joined(separator: ", "))",
                    "ms": "\((ContinuousClock.now - start).inMilliseconds)",
                ])
        } catch {
            // The lists still answer (walking the table); the next pull of the collection tries again.
            logger.error(
                "building list indexes failed", metadata: ["collection": "\(collection)", "error": "\(error)"])
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

        var entriesFingerprint: Int {
            switch self {
            case .clients(let page): page.entriesFingerprint
            case .tickets(let page): page.entriesFingerprint
            case .ticketMessages(let page): page.entriesFingerprint
            case .orders(let page): page.entriesFingerprint
            case .devices(let page): page.entriesFingerprint
            }
        }

        var count: Int {
            switch self {
            case .clients(let page): page.count
            case .tickets(let page): page.count
            case .ticketMessages(let page): page.count
            case .orders(let page): page.count
            case .devices(let page): page.count
            }
        }
    }

    /// Requests the page after `cursor` and decodes it (off the writer: decoding page n+1 overlaps applying page n).
    /// At most `cap` records; the cap that holds after it — lowered when the page was over the size limit for one
    /// answer and asked for again with half as many records, as often as that takes (records within the contract's
    /// string limits can make a page of the configured size weigh hundreds of MiB). Bounded: one request more per
    /// halving, down to one record, none once the engine is asked to stop. The link meter's size is not a cap: it
    /// grows again when the link does.
    private func fetch(_ collection: SyncCollection, cursor: String?, cap: Int) async -> (Fetched, cap: Int) {
        let reply: APIClient.Reply
        var cap = cap
        // On a slow link, pages small enough to arrive within the meter's target time (the cursor is opaque and
        // independent of the limit).
        var limit = min(cap, api.link.pageSize(for: collection.name, configured: configuration.pageSize))
        while true {
            do {
                reply = try await api.changes(collection, cursor: cursor, limit: limit)
                break
            } catch .tooLarge(let detail) where limit > 1 && !stopFlag.isSet {
                limit /= 2
                cap = limit
                logger.warning(
                    "a changes page was over the size limit for one answer; asking for fewer records",
                    metadata: ["collection": "\(collection)", "records": "\(limit)", "error": "\(detail)"])
            } catch {
                return (.requestFailed(error), cap)
            }
        }
        let page: DecodedPage
        do {
            switch collection {
            case .clients: page = .clients(try api.decode(ChangesPage<Client>.self, reply.body))
            case .tickets: page = .tickets(try api.decode(ChangesPage<Ticket>.self, reply.body))
            case .ticketMessages: page = .ticketMessages(try api.decode(ChangesPage<TicketMessage>.self, reply.body))
            case .orders: page = .orders(try api.decode(ChangesPage<Order>.self, reply.body))
            case .devices: page = .devices(try api.decode(ChangesPage<Device>.self, reply.body))
            }
        } catch {
            return (.malformed(error), cap)
        }
        api.link.recordPage(collection: collection.name, wireBytes: reply.wireBytes, records: page.count)
        return (.page(page), cap)
    }

    /// Follows one collection's feed to its end. While page n is applied (in its transaction, with its cursor), page
    /// n+1 is already requested and decoded — at most one page ahead, so memory stays bounded. A page is applied
    /// only after every page before it committed, so the stored cursor always names the last committed page.
    private func pull(
        _ collection: SyncCollection, into report: inout Report, progress: @Sendable (Double) async -> Void
    ) async throws(SyncStop) {
        var restarted = false
        var pages = 0
        // Records per page at most, for the rest of this pull: lowered when a page was over the size limit.
        var cap = Int.max
        resync: while true {
            try stopFlag.check()
            let (cursor, sweeping): (String?, Bool)
            do {
                (cursor, sweeping) = try await store.read { db in
                    (
                        try String.fetchOne(
                            db, sql: "SELECT cursor FROM sync_metadata WHERE collection = ?",
                            arguments: [collection.name]),
                        try Bool.fetchOne(
                            db, sql: "SELECT EXISTS (SELECT 1 FROM resync_marks WHERE collection = ?)",
                            arguments: [collection.name]) ?? false
                    )
                }
            } catch {
                throw .failed("\(collection): store: \(error)")
            }
            if cursor == nil {
                // A pull from the beginning returns everything the server has now: whatever the replica holds and
                // it does not return is gone (an earlier pull that never finished, a server restored meanwhile).
                // Marks left by an earlier start are not enough: rows that came since (a local create pushed
                // meanwhile, then lost by a restore) must be confirmed by this pass too.
                let marked = try await markAll(collection)
                if marked, !sweeping { continue resync }
            }
            var requested = cursor
            var seen: Set<String> = cursor.map { [$0] } ?? []
            // The pages delivered in this read (`entriesFingerprint`): a few thousand integers for the largest shop.
            var delivered: Set<Int> = []
            var stalled = 0
            var fetched: Fetched
            (fetched, cap) = await fetch(collection, cursor: cursor, cap: cap)
            while true {
                let page: DecodedPage
                switch fetched {
                case .page(let decoded):
                    page = decoded
                case .requestFailed(let error)
                where error.status == 410 && error.code == "cursor_expired" && !restarted:
                    // The server cannot resume from this cursor: resync the collection from the beginning (once),
                    // marking every id held now so that those the resync does not bring back are deleted at its end.
                    restarted = true
                    logger.warning(
                        "cursor expired; resyncing from the beginning", metadata: ["collection": "\(collection)"])
                    try await startResync(collection, reason: "cursor expired (410): resyncing from the beginning")
                    events.emit(.cursorReset(collection: collection))
                    continue resync
                case .requestFailed(let error):
                    try await recordFailure(collection, error.description)
                    throw SyncStop.from(error)
                case .malformed(let error):
                    try await recordFailure(collection, error.description)
                    throw .failed("\(collection): \(error)")
                }
                // A feed that does not advance: has_more with a cursor already seen, with nothing in it, or with
                // entries this read already had (the same page again under a new cursor text).
                let repeated = page.count > 0 && !delivered.insert(page.entriesFingerprint).inserted
                if page.hasMore,
                    page.nextCursor == requested || seen.contains(page.nextCursor) || page.count == 0 || repeated
                {
                    stalled += 1
                    if stalled >= configuration.maxStalledPages {
                        let message =
                            "\(collection): the changes feed does not advance (\(stalled) pages in a row with has_more true and a cursor already seen, no entries, or entries already delivered)"
                        try await recordFailure(collection, message)
                        throw .failed(message)
                    }
                } else {
                    stalled = 0
                }
                pages += 1
                if pages > configuration.maxPagesPerRun {
                    let message =
                        "\(collection): more than \(configuration.maxPagesPerRun) pages in one run; continuing next run"
                    try await recordFailure(collection, message)
                    throw .failed(message)
                }
                seen.insert(page.nextCursor)
                requested = page.nextCursor
                let applied: Applied
                if page.hasMore && !stopFlag.isSet && configuration.pullAhead {
                    async let ahead = fetch(collection, cursor: page.nextCursor, cap: cap)
                    applied = try await handle(collection, page, sweeping: sweeping)
                    (fetched, cap) = await ahead
                } else {
                    applied = try await handle(collection, page, sweeping: sweeping)
                    if page.hasMore { (fetched, cap) = await fetch(collection, cursor: page.nextCursor, cap: cap) }
                }
                report.records[collection, default: 0] += applied.records
                report.deleted += applied.deleted
                report.conflicts += applied.conflicts
                report.rewound += applied.rewound
                report.stale += applied.stale
                report.settledCreates += applied.settledCreates
                if applied.resized { report.resized.formUnion(collection.withDependents) }
                events.emit(
                    .pageApplied(
                        collection: collection, records: applied.records, deleted: applied.deleted,
                        hasMore: page.hasMore))
                if !page.hasMore, sweeping {
                    let swept = try await sweep(collection)
                    report.deleted += swept.deleted
                    report.conflicts += swept.conflicts
                    if swept.deleted > 0 { report.resized.formUnion(collection.withDependents) }
                }
                // Pages of unknown number: approach 1 without reaching it until the feed is caught up.
                await progress(page.hasMore ? 1 - 1 / Double(pages + 1) : 1)
                if !page.hasMore { return }
                // A stop ends the run here: the page fetched ahead is dropped, its cursor was never stored.
                try stopFlag.check()
            }
        }
    }

    /// What applying a page did.
    struct Applied {
        var records = 0
        var deleted = 0
        var conflicts = 0
        var rewound = 0
        var stale = 0
        /// A record new to the replica, or a deletion.
        var resized = false
        /// Creates sent from here whose records the page showed: settled, which releases what waited for them.
        var settledCreates = 0
    }

    private func handle(_ collection: SyncCollection, _ page: DecodedPage, sweeping: Bool) async throws(SyncStop)
        -> Applied
    {
        switch page {
        case .clients(let page): return try await handlePlain(page, sweeping: sweeping)
        case .tickets(let page): return try await handlePlain(page, sweeping: sweeping)
        case .ticketMessages(let page): return try await handlePlain(page, sweeping: sweeping)
        case .orders(let page): return try await handleEditable(page, sweeping: sweeping)
        case .devices(let page): return try await handleEditable(page, sweeping: sweeping)
        }
    }

    /// Collections without local edits: the server copy is the row, unless it is older than the row (item of
    /// `verifyOlderCopies`). The page's older copies are verified first, then it is applied in one transaction with
    /// its cursor.
    private func handlePlain<R: ReplicaRecord>(_ page: ChangesPage<R>, sweeping: Bool) async throws(SyncStop) -> Applied
    {
        events.emit(.pageReceived(collection: R.collection, records: page.data.count, deleted: page.deleted.count))
        let checks = try await verifyOlderCopies(page)
        return try await commit(R.collection) { db, now, applied in
            let versions = try Self.localVersions(R.self, ids: page.data.map(\.id), db)
            applied.resized = page.data.contains { versions[$0.id] == nil }
            var plain: [R] = []
            for record in page.data {
                guard let local = versions[record.id], record.version < local else {
                    plain.append(record)
                    continue
                }
                switch checks.verdicts[record.id] {
                case .rewound(let current)?:
                    try rebase(R.collection, now).adoptRewound(plain: current, previousVersion: local, db)
                    applied.rewound += 1
                case .fresher(let current)?:
                    if current.version >= local { plain.append(current) }
                    applied.stale += 1
                case .gone?, nil:
                    applied.stale += 1
                }
            }
            // A client created here whose create was sent: the server has it, the create is settled.
            if R.collection == .clients {
                applied.settledCreates += try Outbox.settleCreates(db, collection: .clients, ids: plain.map(\.id))
            }
            try db.upsert(plain, syncedAt: now)
            applied.records = page.data.count
            if R.collection == .ticketMessages, let messages = plain as? [TicketMessage], !messages.isEmpty {
                // A new message the server has is no longer pending (a create whose reply was lost).
                try Outbox.settleMessageCreates(db, messages: messages)
            }
            try finish(page, checks, sweeping: sweeping, now: now, db, &applied)
        }
    }

    /// Orders and devices: every copy goes through `RecordRebase`, which keeps pending local changes and resolves
    /// conflicts by policy.
    private func handleEditable<R: EditableRecord>(_ page: ChangesPage<R>, sweeping: Bool) async throws(SyncStop)
        -> Applied
    {
        events.emit(.pageReceived(collection: R.collection, records: page.data.count, deleted: page.deleted.count))
        let checks = try await verifyOlderCopies(page)
        return try await commit(R.collection) { db, now, applied in
            let rebase = rebase(R.collection, now)
            let versions = try Self.localVersions(R.self, ids: page.data.map(\.id), db)
            applied.resized = page.data.contains { versions[$0.id] == nil }
            // One query for the page instead of one per record: most records have no local change.
            let changed = try Outbox.recordsWithEntries(db, collection: R.collection, ids: page.data.map(\.id))
            // Records created here whose create was sent and whose reply never came: the server has them, so the
            // create is settled (as its replay would have told), and the copy is their first base.
            if !changed.isEmpty {
                applied.settledCreates += try rebase.settleCreates(page.data.filter { changed.contains($0.id) }, db)
            }
            // Rows reconciled here had any edit of another program queued first: the triggers' notes of them (its
            // edit's, and this very upsert's) need no second look.
            var reconciled: [String] = []
            for record in page.data {
                var copy = record
                if let local = versions[record.id], record.version < local {
                    switch checks.verdicts[record.id] {
                    case .rewound(let current)?:
                        try rebase.adoptRewound(current, db)
                        applied.rewound += 1
                        reconciled.append(record.id)
                        continue
                    case .fresher(let current)?:
                        copy = current
                        applied.stale += 1
                    case .gone?, nil:
                        applied.stale += 1
                        continue
                    }
                }
                if try rebase.apply(copy, db, mayHaveEntries: changed.contains(record.id)).conflict != nil {
                    applied.conflicts += 1
                }
                reconciled.append(record.id)
            }
            for chunk in stride(from: 0, to: reconciled.count, by: 500).map({
                Array(reconciled[$0..<min($0 + 500, reconciled.count)])
            }) {
                try db.execute(
                    sql: """
                        DELETE FROM edited_rows WHERE collection = ?
                        AND record_id IN (\(databaseQuestionMarks(count: chunk.count)))
                        """, arguments: StatementArguments([R.collection.name] + chunk))
            }
            applied.records = page.data.count
            try finish(page, checks, sweeping: sweeping, now: now, db, &applied)
        }
    }

    private func rebase(_ collection: SyncCollection, _ now: Timestamp) -> RecordRebase {
        RecordRebase(
            policy: configuration.policy(for: collection), clockOffsetMilliseconds: api.clockOffsetMilliseconds,
            now: now, cipher: configuration.passcodeCipher)
    }

    /// Tombstones, records the server no longer has, resync marks and the cursor: the end of every page's transaction.
    private func finish<R: SyncRecord>(
        _ page: ChangesPage<R>, _ checks: Checks<R>, sweeping: Bool, now: Timestamp, _ db: Database,
        _ applied: inout Applied
    ) throws {
        let policy = configuration.policy(for: R.collection).rawValue
        let gone = checks.gone
        let deleted = page.deleted.map(\.id).filter { !checks.staleTombstones.contains($0) }
        for id in deleted + gone {
            applied.conflicts += try RecordRebase.deleteWithPendingChildren(
                R.collection, id: id, policy: policy, now: now, db)
        }
        applied.deleted = deleted.count + gone.count
        if applied.deleted > 0 { applied.resized = true }
        if sweeping {
            let ids = page.data.map(\.id) + page.deleted.map(\.id) + gone
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
                try db.execute(
                    sql: """
                        DELETE FROM resync_marks WHERE collection = ?
                        AND record_id IN (\(databaseQuestionMarks(count: chunk.count)))
                        """, arguments: StatementArguments([R.collection.name] + chunk))
            }
        }
        try Self.saveCursor(R.collection, nextCursor: page.nextCursor, hasMore: page.hasMore, now: now, db)
    }

    /// One page's transaction.
    private func commit(
        _ collection: SyncCollection, _ body: @escaping @Sendable (Database, Timestamp, inout Applied) throws -> Void
    ) async throws(SyncStop) -> Applied {
        let now = clock.now()
        do {
            return try await store.write { db in
                var applied = Applied()
                try body(db, now, &applied)
                return applied
            }
        } catch {
            throw .failed("\(collection): store: \(error)")
        }
    }

    // MARK: Copies older than the replica's

    /// What `GET /{collection}/{id}` said about a record whose page copy is older than the replica's.
    enum Verdict<R: Sendable>: Sendable {
        /// The server's current record is older than ours too: its history went back. Adopt it.
        case rewound(R)
        /// The page's copy was stale; this is the current record.
        case fresher(R)
        /// The record no longer exists.
        case gone
    }

    struct Checks<R: Sendable>: Sendable {
        var verdicts: [String: Verdict<R>] = [:]
        var gone: [String] = []
        /// Tombstones older than the replica's copy whose record the server still has: not deleted.
        var staleTombstones: Set<String> = []
    }

    /// A page copy older than the replica's is either stale (a lagging replica behind the API, a cached page) or
    /// the server's history going back (restored from a backup, deleted and created again). The record's own
    /// endpoint tells which. At most `maxVerificationsPerPage` are asked; when more are older, the rest follow the
    /// majority of those asked (all rewound: adopted; otherwise ignored as stale).
    private func verifyOlderCopies<R: ReplicaRecord>(_ page: ChangesPage<R>) async throws(SyncStop) -> Checks<R> {
        let versions: [String: Int]
        do {
            versions = try await store.read { db in try Self.localVersions(R.self, ids: page.data.map(\.id), db) }
        } catch {
            throw .failed("\(R.collection): store: \(error)")
        }
        var checks = Checks<R>()
        checks.staleTombstones = try await verifyOlderTombstones(page)
        let older = page.data.filter { record in versions[record.id].map { record.version < $0 } ?? false }
        guard !older.isEmpty else { return checks }
        for record in older.prefix(configuration.maxVerificationsPerPage) {
            let local = versions[record.id] ?? 0
            guard let current = try await currentCopy(R.self, id: record.id, whose: "copy") else {
                checks.verdicts[record.id] = .gone
                checks.gone.append(record.id)
                continue
            }
            checks.verdicts[record.id] = current.version < local ? .rewound(current) : .fresher(current)
        }
        let asked = checks.verdicts.values
        let allRewound = asked.allSatisfy { if case .rewound = $0 { true } else { false } }
        if older.count > configuration.maxVerificationsPerPage, allRewound {
            for record in older.dropFirst(configuration.maxVerificationsPerPage) {
                checks.verdicts[record.id] = .rewound(record)
            }
        }
        let rewound = checks.verdicts.values.filter { if case .rewound = $0 { true } else { false } }.count
        logger.warning(
            "page copies older than the replica's",
            metadata: [
                "collection": "\(R.collection)", "older": "\(older.count)", "rewound": "\(rewound)",
                "stale": "\(older.count - rewound - checks.gone.count)", "gone": "\(checks.gone.count)",
            ])
        return checks
    }

    /// A tombstone deleted before the replica's copy was last changed on the server cannot be that copy's end: it
    /// is a stale page (a cache, a lagging replica behind the API), or the record was deleted and created again. The
    /// record's own endpoint tells: a 404 deletes it as the tombstone said; a record is kept (a stale tombstone
    /// deleted a live order and dropped the edit waiting on it, and nothing brought it back). At most
    /// `maxVerificationsPerPage` are asked; the rest are deleted only when most of those asked were gone.
    private func verifyOlderTombstones<R: ReplicaRecord>(_ page: ChangesPage<R>) async throws(SyncStop) -> Set<String> {
        guard !page.deleted.isEmpty else { return [] }
        let changed: [String: Timestamp]
        do {
            changed = try await store.read { db in
                try Self.localUpdateTimes(R.self, ids: page.deleted.map(\.id), db)
            }
        } catch {
            throw .failed("\(R.collection): store: \(error)")
        }
        let older = page.deleted.filter { tombstone in changed[tombstone.id].map { tombstone.deletedAt < $0 } ?? false }
        guard !older.isEmpty else { return [] }
        var kept: Set<String> = []
        let asked = min(older.count, configuration.maxVerificationsPerPage)
        for tombstone in older.prefix(asked) {
            if try await currentCopy(R.self, id: tombstone.id, whose: "tombstone") != nil { kept.insert(tombstone.id) }
        }
        if older.count > asked, 2 * (asked - kept.count) <= asked {
            for tombstone in older.dropFirst(asked) { kept.insert(tombstone.id) }
        }
        logger.warning(
            "tombstones older than the replica's copies",
            metadata: [
                "collection": "\(R.collection)", "older": "\(older.count)", "kept": "\(kept.count)",
                "deleted": "\(older.count - kept.count)",
            ])
        return kept
    }

    /// The record as the server has it now (`GET /{collection}/{id}`), or nil when it answers that it has none (404
    /// `not_found`); any other failure is the collection's, and ends its pull (or the run, as the error says).
    /// `whose`: what made the record worth asking about ("copy", "tombstone": older than the replica's), for the
    /// failure's message.
    private func currentCopy<R: ReplicaRecord>(_ type: R.Type, id: String, whose: String) async throws(SyncStop) -> R? {
        do throws(APIError) {
            return try await api.currentRecord(R.self, id: id)
        } catch {
            if error.isFinalAnswer, error.status == 404, error.code == "not_found" { return nil }
            let message = "\(R.collection): checking \(id), whose \(whose) is older than the replica's: \(error)"
            try await recordFailure(R.collection, message)
            throw SyncStop.from(error).endsRun ? SyncStop.from(error) : .failed(message)
        }
    }

    /// id → `updated_at` of the replica's rows among `ids`.
    static func localUpdateTimes<R: ReplicaRecord>(_ type: R.Type, ids: [String], _ db: Database) throws
        -> [String: Timestamp]
    {
        try localValues(R.self, column: "updated_at", ids: ids, db)
    }

    /// id → version of the replica's rows among `ids`.
    static func localVersions<R: ReplicaRecord>(_ type: R.Type, ids: [String], _ db: Database) throws -> [String: Int] {
        try localValues(R.self, column: "version", ids: ids, db)
    }

    /// id → `column` of the replica's rows among `ids` (rows where it is NULL left out), 500 ids a statement.
    private static func localValues<R: ReplicaRecord, Value: DatabaseValueConvertible>(
        _ type: R.Type, column: String, ids: [String], _ db: Database
    ) throws -> [String: Value] {
        var values: [String: Value] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT id, \(column) FROM \(R.databaseTableName) WHERE id IN (\(databaseQuestionMarks(count: chunk.count)))",
                arguments: StatementArguments(chunk))
            for row in rows {
                if let value: Value = row[column] { values[row["id"]] = value }
            }
        }
        return values
    }

    // MARK: Resync and sweep

    /// Marks every id the collection holds (a pull from the beginning is about to start); true when there was any.
    private func markAll(_ collection: SyncCollection) async throws(SyncStop) -> Bool {
        do {
            return try await store.write { db in
                try db.execute(
                    sql:
                        "INSERT OR IGNORE INTO resync_marks (collection, record_id) SELECT ?, id FROM \(collection.name)",
                    arguments: [collection.name])
                return db.changesCount > 0
            }
        } catch {
            throw .failed("\(collection): store: \(error)")
        }
    }

    /// Drops the cursor and marks every id the collection holds, in one transaction.
    private func startResync(_ collection: SyncCollection, reason: String) async throws(SyncStop) {
        let now = clock.now()
        do {
            try await store.write { db in
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO resync_marks (collection, record_id) SELECT ?, id FROM \(collection.name)
                        """, arguments: [collection.name])
                try db.execute(
                    sql: """
                        UPDATE sync_metadata SET cursor = NULL, state = 'initial', last_error = ?, last_synced_at = ?
                        WHERE collection = ?
                        """, arguments: [reason, now, collection.name])
            }
        } catch {
            throw .failed("\(collection): store: \(error)")
        }
    }

    /// At the end of a resync: the ids still marked were not returned by it, so the server no longer has them —
    /// unless the feed lied (a stale cached page saying it had ended, a lagging replica behind the API). Before a
    /// record goes, its own endpoint is asked: a 404 (the API's) deletes it with its children, pending changes to the
    /// conflict log as for a tombstone; a record the server still has is kept and updated. At most `maxSweepChecks`
    /// a run; the rest stay marked for the next run. Records created here and not yet on the server are never marked
    /// for deletion.
    private func sweep(_ collection: SyncCollection) async throws(SyncStop) -> (deleted: Int, conflicts: Int) {
        let ids: [String]
        do {
            ids = try await store.write { db in
                // Marks whose row went meanwhile (with a parent) need no check; records created here and not yet
                // on the server are never swept.
                try db.execute(
                    sql: """
                        DELETE FROM resync_marks WHERE collection = ?
                        AND (record_id NOT IN (SELECT id FROM \(collection.name))
                             OR \(Outbox.hasEntrySQL(
                                 collection: "resync_marks.collection", recordId: "resync_marks.record_id", kind: .create)))
                        """, arguments: [collection.name])
                return try String.fetchAll(
                    db, sql: "SELECT record_id FROM resync_marks WHERE collection = ? ORDER BY record_id LIMIT ?",
                    arguments: [collection.name, configuration.maxSweepChecks])
            }
        } catch {
            throw .failed("\(collection): store: \(error)")
        }
        guard !ids.isEmpty else { return (0, 0) }
        var gone: [String] = []
        var found: [(id: String, record: DecodedRecord)] = []
        for id in ids {
            do throws(APIError) {
                // Decoded as it arrives, outside the transaction below: a malformed answer is the server's, not the
                // store's.
                found.append(
                    (id, try await DecodedRecord(collection, id, api)))
            } catch {
                if error.isFinalAnswer, error.status == 404, error.code == "not_found" {
                    gone.append(id)
                    continue
                }
                let message =
                    "\(collection): checking \(id), which the resync did not return, before deleting it: \(error)"
                try await recordFailure(collection, message)
                throw SyncStop.from(error).endsRun ? SyncStop.from(error) : .failed(message)
            }
        }
        if !found.isEmpty {
            logger.warning(
                "the resync did not return records the server still has (a stale or inconsistent feed); kept",
                metadata: ["collection": "\(collection)", "records": "\(found.count)"])
        }
        let policy = configuration.policy(for: collection).rawValue
        let rebase = rebase(collection, clock.now())
        let now = clock.now()
        let (checkedGone, checkedFound) = (gone, found)
        do {
            return try await store.write { db in
                var conflicts = 0
                for id in checkedGone {
                    conflicts += try RecordRebase.deleteWithPendingChildren(
                        collection, id: id, policy: policy, now: now, db)
                }
                for (_, record) in checkedFound { try Self.take(record, rebase, db) }
                let checked = checkedGone + checkedFound.map(\.id)
                try db.execute(
                    sql: """
                        DELETE FROM resync_marks WHERE collection = ?
                        AND record_id IN (\(databaseQuestionMarks(count: checked.count)))
                        """, arguments: StatementArguments([collection.name] + checked))
                return (checkedGone.count, conflicts)
            }
        } catch {
            throw .failed("\(collection): store: \(error)")
        }
    }

    /// One record of a collection, decoded (a record's own endpoint answers with it).
    enum DecodedRecord: Sendable {
        case client(Client)
        case ticket(Ticket)
        case ticketMessage(TicketMessage)
        case order(Order)
        case device(Device)

        /// The record `id` of `collection` as the server has it now (`APIClient.currentRecord`: `malformed` when
        /// the answer is another record).
        init(_ collection: SyncCollection, _ id: String, _ api: APIClient) async throws(APIError) {
            switch collection {
            case .clients: self = .client(try await api.currentRecord(Client.self, id: id))
            case .tickets: self = .ticket(try await api.currentRecord(Ticket.self, id: id))
            case .ticketMessages: self = .ticketMessage(try await api.currentRecord(TicketMessage.self, id: id))
            case .orders: self = .order(try await api.currentRecord(Order.self, id: id))
            case .devices: self = .device(try await api.currentRecord(Device.self, id: id))
            }
        }

        var id: String {
            switch self {
            case .client(let record): record.id
            case .ticket(let record): record.id
            case .ticketMessage(let record): record.id
            case .order(let record): record.id
            case .device(let record): record.id
            }
        }
    }

    /// A record's current copy from its own endpoint: applied with the version check, and adopted when the server's
    /// history went back (it is older than the row although it is the server's current record).
    static func take(_ record: DecodedRecord, _ rebase: RecordRebase, _ db: Database) throws {
        func plain<R: ReplicaRecord>(_ record: R) throws {
            let local = try localVersions(R.self, ids: [record.id], db)[record.id]
            if let local, record.version < local {
                try rebase.adoptRewound(plain: record, previousVersion: local, db)
            } else {
                try record.upsert(db, syncedAt: rebase.now)
            }
        }
        func editable<R: EditableRecord>(_ record: R) throws {
            let local = try localVersions(R.self, ids: [record.id], db)[record.id]
            if let local, record.version < local {
                try rebase.adoptRewound(record, db)
            } else {
                try rebase.apply(record, db)
            }
        }
        switch record {
        case .client(let record): try plain(record)
        case .ticket(let record): try plain(record)
        case .ticketMessage(let record): try plain(record)
        case .order(let record): try editable(record)
        case .device(let record): try editable(record)
        }
    }

    // MARK: Store

    private func recordFailure(_ collection: SyncCollection, _ error: String) async throws(SyncStop) {
        let now = clock.now()
        do {
            try await store.write { db in
                try db.execute(
                    sql:
                        "UPDATE sync_metadata SET state = 'error', last_error = ?, last_synced_at = ? WHERE collection = ?",
                    arguments: [error, now, collection.name])
            }
        } catch {
            throw .failed("store: \(error)")
        }
    }

    static func saveCursor(
        _ collection: SyncCollection, nextCursor: String, hasMore: Bool, now: Timestamp, _ db: Database
    ) throws {
        try db.execute(
            sql: """
                UPDATE sync_metadata SET cursor = ?, state = ?, last_synced_at = ?, last_error = NULL,
                    last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END
                WHERE collection = ?
                """,
            arguments: [nextCursor, hasMore ? "pulling" : "idle", now, !hasMore, now, collection.name])
    }
}
