internal import Foundation
internal import GRDB
internal import Logging
internal import RepairSyncModels
internal import RepairSyncStore
internal import Synchronization

/// Sends due outbox entries and applies each acknowledgement together with its server copy in one transaction.
/// Never retries a change with a different idempotency key unless a rebase made it a different request.
///
/// Entries of different records (different order keys) are in flight together, at most
/// `configuration.pushConcurrency` at a time over the client's keep-alive connections; entries of one record, or of
/// one ticket's messages, go strictly one after another: `Outbox.due` offers only the oldest unfinished entry of
/// each order key, and the next one becomes due only once it is done.
///
/// Most urgent first (`PushPriority`): the due entries are taken in batches of `batchSize`, most urgent class
/// first, and listed again after each batch — so a status change made while a thousand notes drain goes out with
/// the next batch, not after the thousandth note.
struct Pusher {
    let store: ReplicaStore
    let api: APIClient
    let configuration: EngineConfiguration
    let clock: any EngineClock
    let logger: Logger
    let events: EngineEvents
    let stopFlag: StopFlag
    /// Whether the API answers its health check, asked once a run when a change's attempts ran out on an outage.
    private let health = HealthOfTheRun()

    struct Report {
        var pushed = 0
        var pushedByCollection: [String: Int] = [:]
        var failed = 0
        /// The last failure of a change left for its retry (`failed`), as the server or the network put it.
        var lastFailure: String?
        /// Of `failed`, those the server as a whole gave (502/503/504, a page that is not the API's).
        var outages = 0
        var dead = 0
        var conflicts = 0
        /// Collections that lost a row (the server no longer had the record): their counts are re-read.
        var resized: Set<SyncCollection> = []
    }

    /// Due entries listed at a time: enough to keep every connection busy, few enough that an urgent change made
    /// meanwhile waits for at most one batch.
    static func batchSize(_ configuration: EngineConfiguration) -> Int { max(64, 32 * configuration.pushConcurrency) }

    /// Pushes every due entry. `report` holds what was done even when the run stops early.
    func run(into report: inout Report, progress: @Sendable (Double) async -> Void) async throws(SyncStop) {
        var rebases: [Int64: Int] = [:]
        let total = max(1, (try? await store.read { db in try Outbox.counts(db).pending }) ?? 1)
        var handled = 0
        let batch = Self.batchSize(configuration)
        let horizon = configuration.retry.horizon
        while true {
            let due: [(entry: OutboxEntry, urgency: PushPriority)]
            do {
                let now = clock.now()
                due = try await store.read { db in try Outbox.due(db, now: now, horizon: horizon, limit: batch) }
            } catch {
                throw .failed("reading the outbox: \(error)")
            }
            guard !due.isEmpty else { break }
            var sendable: [(entry: OutboxEntry, urgency: PushPriority)] = []
            for (entry, urgency) in due {
                if let count = rebases[entry.seq], count >= configuration.maxRebasesPerRun {
                    // Bounded: a record the server changes faster than we rebase (or a server that keeps answering
                    // 412) is not replayed without end. Visible with its reason; `retry` or `discard` decide.
                    let reason =
                        "the server answered 412 (version_mismatch) \(count) times in one run; retry or discard it"
                    let rebase = recordRebase(entry.collection)
                    try await write { db in
                        try SyncEngine.rendering(entry, rebase, db) {
                            try Outbox.reject(db, seq: entry.seq, error: reason)
                        }
                    }
                    logger.error(
                        "change given up after repeated 412s",
                        metadata: [
                            "collection": "\(entry.collection)", "id": "\(entry.recordId)", "seq": "\(entry.seq)",
                        ])
                    report.dead += 1
                } else {
                    sendable.append((entry, urgency))
                }
            }
            // Each due entry is the head of its own order key, so they may all be in flight together.
            var waiting = sendable[...]
            var inFlight: [Int64: PushPriority] = [:]
            var stop: SyncStop?
            await withTaskGroup(of: (OutboxEntry, Swift.Result<Result, SyncStop>).self) { group in
                func launch() {
                    while inFlight.count < max(1, configuration.pushConcurrency), stop == nil, !stopFlag.isSet,
                        let (entry, urgency) = waiting.popFirst()
                    {
                        inFlight[entry.seq] = urgency
                        group.addTask {
                            do throws(SyncStop) {
                                return (entry, .success(try await push(entry)))
                            } catch {
                                return (entry, .failure(error))
                            }
                        }
                    }
                }
                launch()
                // A stop (offline, 401, 429, store error) sends nothing new; requests already in flight finish and are
                // committed, so the run ends at a request boundary.
                while let (entry, outcome) = await group.next() {
                    let urgency = inFlight.removeValue(forKey: entry.seq) ?? entry.priority
                    switch outcome {
                    case .success(.done(let overridden)):
                        if overridden { report.conflicts += 1 }
                        report.pushed += 1
                        report.pushedByCollection[entry.collection.name, default: 0] += 1
                        events.emit(.pushed(seq: entry.seq, collection: entry.collection, id: entry.recordId))
                        if urgency < entry.priority, stop == nil {
                            // It went in the class of a more urgent change waiting for it, which is due now: listed
                            // again at once, that one goes next rather than after this batch.
                            let running = Set(inFlight.keys)
                            let now = clock.now()
                            if let fresh = try? await store.read({ db in
                                try Outbox.due(db, now: now, horizon: horizon, limit: batch, excluding: running)
                            }) {
                                waiting =
                                    fresh.filter { (rebases[$0.entry.seq] ?? 0) < configuration.maxRebasesPerRun }[...]
                            }
                        }
                    case .success(.rebased(let conflict)):
                        rebases[entry.seq, default: 0] += 1
                        if conflict { report.conflicts += 1 }
                    case .success(.retryLater(let reason, let outage)):
                        report.failed += 1
                        report.lastFailure = reason
                        if outage { report.outages += 1 }
                    case .success(.dead): report.dead += 1
                    case .success(.dropped):
                        report.conflicts += 1
                        report.resized.formUnion(entry.collection.withDependents)
                    case .success(.skipped): break
                    case .failure(let error): stop = stop ?? error
                    }
                    handled += 1
                    await progress(min(1, Double(handled) / Double(total)))
                    launch()
                }
            }
            if let stop { throw stop }
            try stopFlag.check()
        }
    }

    enum Result {
        /// Acknowledged. `overridden`: the server's copy does not hold every value sent (audit log `server_overrode`).
        case done(overridden: Bool)
        case rebased(conflict: Bool)
        case retryLater(reason: String, outage: Bool)
        case dead
        /// The record is gone on the server; the change is in the conflict log.
        case dropped
        /// The entry left the outbox (or was held) after the run listed it, e.g. dropped by a conflict resolution.
        case skipped
    }

    /// Concurrent pushes share commits: marking an entry in flight, acknowledgements, failures.
    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(SyncStop) -> T {
        do {
            return try await store.groupCommit.write(body)
        } catch {
            throw .failed("store: \(error)")
        }
    }

    private func push(_ listed: OutboxEntry) async throws(SyncStop) -> Result {
        // The run listed its entries earlier; an edit since may have coalesced into this one (it was never sent).
        // Read it again as it is marked in flight, in one transaction: what is sent is what the entry holds, and
        // nothing can coalesce into it any more — a later edit gets an entry of its own.
        // Marked in doubt (`sent`) in the same commit, before the request leaves: from here on, whatever happens —
        // a lost response, a crash, a 401 — nothing coalesces into it and its key is only ever replayed.
        let current = try await write { db -> OutboxEntry?? in
            guard var entry = try Outbox.entry(db, seq: listed.seq),
                [.pending, .failed, .inFlight].contains(entry.state)
            else { return .some(nil) }
            if let problem = sealedPasscodeProblem(entry) {
                // Never sent without it: the server's copy would lack the passcode, and the reply replace the row.
                // Dead as it is (in doubt if an earlier attempt was sent), for the admin to see and retry.
                try Outbox.recordFailure(db, seq: entry.seq, error: problem, nextAttempt: nil, countsAsAttempt: false)
                return nil
            }
            try Outbox.markSending(db, seq: entry.seq)
            entry.state = .inFlight
            entry.sent = true
            return entry
        }
        guard let listedStill = current else { return .dead }
        guard let entry = listedStill else { return .skipped }
        events.emit(.sending(seq: entry.seq, collection: entry.collection, id: entry.recordId))
        do {
            switch (entry.kind, entry.collection) {
            case (.update, .orders): return try await pushUpdate(entry, as: Order.self)
            case (.update, .devices): return try await pushUpdate(entry, as: Device.self)
            case (.create, .ticketMessages): return try await pushMessage(entry)
            case (.create, .clients), (.create, .orders), (.create, .devices): return try await pushCreate(entry)
            default:
                try await write { db in try Outbox.reject(db, seq: entry.seq, error: "unsupported change") }
                return .dead
            }
        } catch let error as APIError {
            return try await failed(entry, error)
        } catch let stop as SyncStop {
            throw stop
        } catch {
            throw .failed("\(error)")
        }
    }

    private func pushUpdate<R: EditableRecord>(_ entry: OutboxEntry, as type: R.Type) async throws -> Result {
        let base = try await store.read { db in try BaseCopies.load(db, collection: R.collection, id: entry.recordId) }
        let reply = try await api.patch(
            R.collection, id: entry.recordId, fields: entry.fields, ifMatch: base?.version, key: entry.idempotencyKey)
        let record = try api.decodeRecord(R.self, reply.body, asked: entry.recordId, by: "PATCH")
        // A fresh answer to this write is at a version after the one it was written on (docs/api.md 4.4: version + 1).
        // One that is not — a proxy's cached copy of an earlier answer, or the record's GET — says nothing of this
        // write: the change is tried again under its key (a replay's answer, older by nature, is checked by its header).
        if !reply.replayed, let written = base?.version, record.version <= written {
            throw APIError.malformed(
                "\(R.collection) PATCH \(entry.recordId) with If-Match \(written) answered version \(record.version): not an answer to this write (a cache between?)"
            )
        }
        events.emit(.accepted(seq: entry.seq, collection: entry.collection, id: entry.recordId))
        // Read before the acknowledgement, while this entry still heads its record's order key: no later change of
        // the record can be in flight while the copy is applied.
        let current = reply.replayed ? await currentAfterReplay(record) : nil
        let rebase = RecordRebase(
            policy: configuration.policy(for: R.collection), clockOffsetMilliseconds: api.clockOffsetMilliseconds,
            now: clock.now(), cipher: configuration.passcodeCipher)
        let notKept = try await store.groupCommit.write { db in
            let notKept = try rebase.acknowledge(entry, response: record, db)
            guard let current else { return notKept }
            // Older than the replayed answer: the server's history went back since the write (the rewind was in a
            // feed already read); newer: taken as a pull would.
            if let base = try BaseCopies.load(db, collection: R.collection, id: current.id),
                current.version < base.version
            {
                try rebase.adoptRewound(current, db)
            } else {
                try rebase.apply(current, db)
            }
            return notKept
        }
        if !notKept.isEmpty {
            logger.warning(
                "the server acknowledged a change without the values sent; its copy stands, the values sent are in the conflict log (server_overrode)",
                metadata: [
                    "collection": "\(R.collection)", "id": "\(entry.recordId)",
                    "fields": "\(notKept.joined(separator: ","))",
                ])
        }
        return .done(overridden: !notKept.isEmpty)
    }

    /// A replayed answer is the record as it was when the write was applied, which may be long ago: since then the
    /// server may have put the record back to an older version and announced that in a feed the pull has already
    /// read (seed 4311), and no feed will bring it again. The record as it is now is asked for once. Best effort: the
    /// write is settled by the replay either way; a failure here is logged and the replayed copy stands.
    private func currentAfterReplay<R: EditableRecord>(_ replayed: R) async -> R? {
        do {
            let current = try await api.currentRecord(R.self, id: replayed.id)
            return current.version == replayed.version ? nil : current
        } catch {
            logger.info(
                "could not read the record after a replayed answer; the replayed copy stands",
                metadata: ["collection": "\(R.collection)", "id": "\(replayed.id)", "error": "\(error)"])
            return nil
        }
    }

    private func pushMessage(_ entry: OutboxEntry) async throws -> Result {
        guard let ticketId = entry.fields["ticket_id"] ?? nil, let content = entry.fields["content"] ?? nil else {
            throw EngineError.corruptOutbox("message \(entry.recordId) has no ticket or content")
        }
        let body = NewTicketMessage(
            id: entry.recordId, content: content, isInternal: (entry.fields["is_internal"] ?? nil) == "true")
        // The same bytes on every retry (sorted keys), as a strict server compares the body of a replay.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let reply = try await api.postMessage(
            ticketId: ticketId, body: try encoder.encode(body), key: entry.idempotencyKey)
        let message = try api.decodeRecord(TicketMessage.self, reply.body, asked: entry.recordId, by: "message create")
        guard message.ticketId == ticketId else {
            throw APIError.malformed(
                "message create \(entry.recordId) on ticket \(ticketId) answered with a message of ticket \(message.ticketId)"
            )
        }
        events.emit(.accepted(seq: entry.seq, collection: entry.collection, id: entry.recordId))
        let now = clock.now()
        try await store.groupCommit.write { db in
            try message.upsert(db, syncedAt: now)
            try Outbox.remove(db, seq: entry.seq)
        }
        return .done(overridden: false)
    }

    /// Why a create's sealed passcode cannot be sent, if it cannot: it does not open with this workstation's key — the
    /// key was replaced (a restore without its `passcode.key`, a new workstation) or removed. The create goes dead
    /// with this reason, and `retry` sends it once the key it was sealed with is back.
    private func sealedPasscodeProblem(_ entry: OutboxEntry) -> String? {
        guard entry.kind == .create, let sealed = entry.fields["passcode"] ?? nil,
            configuration.passcodeCipher?.open(sealed) == nil
        else { return nil }
        return configuration.passcodeCipher == nil
            ? "its passcode was sealed with a passcode key and the daemon has none now (store.passcode_key_file): put that key back, then retry"
            : "its passcode does not open with the passcode key the daemon has now (store.passcode_key_file): put the key it was sealed with back, then retry"
    }

    /// A client, an order or a device created here: `POST /{collection}` with its id, the same bytes on every retry
    /// (the fields are fixed once sent). The reply — the record as the server made it, its number and derived fields
    /// included — becomes the row and the base in the transaction that removes the entry.
    private func pushCreate(_ entry: OutboxEntry) async throws -> Result {
        var fields = entry.fields
        if let sealed = fields["passcode"] ?? nil { fields["passcode"] = configuration.passcodeCipher?.open(sealed) }
        fields["id"] = entry.recordId
        let reply = try await api.create(
            entry.collection, body: Data(FieldValuesJSON.encode(fields).utf8), key: entry.idempotencyKey)
        let rebase = recordRebase(entry.collection)
        switch entry.collection {
        case .orders:
            let order = try api.decodeRecord(Order.self, reply.body, asked: entry.recordId, by: "create")
            guard order.orderNumber != nil else {
                throw APIError.malformed("orders create \(entry.recordId) answered without an order_number")
            }
            events.emit(.accepted(seq: entry.seq, collection: entry.collection, id: entry.recordId))
            try await store.groupCommit.write { db in
                try rebase.acknowledgeCreate(entry, response: order, asCreated: reply.status == 201, db)
            }
        case .devices:
            let device = try api.decodeRecord(Device.self, reply.body, asked: entry.recordId, by: "create")
            events.emit(.accepted(seq: entry.seq, collection: entry.collection, id: entry.recordId))
            try await store.groupCommit.write { db in
                try rebase.acknowledgeCreate(entry, response: device, asCreated: reply.status == 201, db)
            }
        default:
            let client = try api.decodeRecord(Client.self, reply.body, asked: entry.recordId, by: "create")
            events.emit(.accepted(seq: entry.seq, collection: entry.collection, id: entry.recordId))
            try await store.groupCommit.write { db in try rebase.acknowledgeCreate(entry, plain: client, db) }
        }
        return .done(overridden: false)
    }

    private func recordRebase(_ collection: SyncCollection) -> RecordRebase {
        RecordRebase(
            policy: configuration.policy(for: collection), clockOffsetMilliseconds: api.clockOffsetMilliseconds,
            now: clock.now(), cipher: configuration.passcodeCipher)
    }

    private func failed(_ entry: OutboxEntry, _ error: APIError) async throws(SyncStop) -> Result {
        let now = clock.now()
        let policy = configuration.policy(for: entry.collection)
        if error.isFinalAnswer {
            // The API's own answer about this key: the change was not applied and never will be as it is.
            switch (error.status, error.code) {
            case (412?, "version_mismatch"?) where entry.kind == .update:
                return try await rebase(entry, after: error)
            case (404?, "not_found"?) where !(entry.kind == .create && entry.collection != .ticketMessages):
                // (A create's 404 cannot mean that its record was deleted: it is a refusal, below.)
                try await write { db in
                    _ = try RecordRebase.deleteWithPendingChildren(
                        entry.collection, id: entry.recordId, policy: policy.rawValue, now: now, db)
                }
                logger.warning(
                    "record deleted on the server; local change kept in the conflict log",
                    metadata: ["collection": "\(entry.collection)", "id": "\(entry.recordId)"])
                return .dropped
            default:
                // 400, 409, 422 and other refusals: this change can never succeed as it is. Dead, visible with the
                // reason, and no longer shown in the record (the server's value is).
                let rebase = recordRebase(entry.collection)
                try await write { db in
                    try SyncEngine.rendering(entry, rebase, db) {
                        try Outbox.reject(db, seq: entry.seq, error: error.description)
                    }
                }
                logger.error(
                    "change rejected by the server; marked dead",
                    metadata: ["collection": "\(entry.collection)", "id": "\(entry.recordId)", "error": "\(error)"])
                return .dead
            }
        }
        if error.sentNothing {
            try await write { db in try Outbox.setState(db, seq: entry.seq, .pending) }
            throw SyncStop.from(error)
        }
        if error.isAuthentication {
            try await write { db in try Outbox.setState(db, seq: entry.seq, .pending) }
            throw SyncStop.from(error)
        }
        if SyncStop.isServerAskingToWait(error) {
            // The server's load, not this change's fault: not an attempt (a change is never given up on because
            // of rate limits), due again when the server said; the run stops and the scheduler comes back then.
            let wait = min(error.retryAfter ?? .seconds(1), configuration.retry.cap)
            try await write { db in
                try Outbox.recordFailure(
                    db, seq: entry.seq, error: error.description,
                    nextAttempt: now.adding(milliseconds: wait.inMilliseconds),
                    countsAsAttempt: false)
            }
            throw SyncStop.from(error)
        }
        return try await retry(entry, error, now: now)
    }

    /// A 412 from the API: its `current` becomes the new base (or, when it is older than the base and not a replayed
    /// answer, the server's history went back and it is adopted), the change is rebased onto it and goes out again
    /// under a new key — the old key's answer is final (a replay would only repeat this 412).
    private func rebase(_ entry: OutboxEntry, after error: APIError) async throws(SyncStop) -> Result {
        guard case .http(let failure) = error else { return try await retry(entry, error, now: clock.now()) }
        let rebase = recordRebase(entry.collection)
        let outcome: (conflict: Bool, rewound: Bool)
        do {
            outcome = try await {
                switch entry.collection {
                case .orders:
                    let (current, replayed) = await currentAfterRefusal(
                        try Self.refusalsCurrent(Order.self, failure, entry),
                        replayed: failure.replayed)
                    return try await store.write { db in
                        try Self.take(current, for: entry, replayed: replayed, rebase, db)
                    }
                default:
                    let (current, replayed) = await currentAfterRefusal(
                        try Self.refusalsCurrent(Device.self, failure, entry),
                        replayed: failure.replayed)
                    return try await store.write { db in
                        try Self.take(current, for: entry, replayed: replayed, rebase, db)
                    }
                }
            }()
        } catch {
            // No usable `current`: the key is settled all the same (never replayed), the change waits for a retry,
            // and the next pull brings the base.
            try await write { db in
                if let stored = try Outbox.entry(db, seq: entry.seq) {
                    try Outbox.rewrite(db, stored, fields: stored.fields)
                }
            }
            return try await retry(
                entry,
                APIError.malformed(
                    "412 without a usable current record: \((error as? DecodingError)?.summary ?? "\(error)")"),
                now: clock.now())
        }
        logger.info(
            outcome.rewound
                ? "the server's copy went back; adopted as the new base, change rebased" : "change rebased after 412",
            metadata: [
                "collection": "\(entry.collection)", "id": "\(entry.recordId)", "conflict": "\(outcome.conflict)",
            ])
        return .rebased(conflict: outcome.conflict)
    }

    /// A 412's `current`, which must be the record the PATCH was for: another record's copy, taken, would be laid
    /// over that record unjudged and rebase this change on it.
    private static func refusalsCurrent<R: EditableRecord>(_ type: R.Type, _ failure: HTTPFailure, _ entry: OutboxEntry)
        throws -> R
    {
        let current = try JSONDecoder().decode(VersionConflictBody<R>.self, from: StorableJSON.repaired(failure.body))
            .current
        guard current.id == entry.recordId else {
            throw APIError.malformed("\(entry.collection) 412 for \(entry.recordId) carried record \(current.id)")
        }
        return current
    }

    /// A replayed 412's `current` is the record as it was when the write was first refused, which may be long ago —
    /// before the record was deleted and created again, say, and the new one pulled (seed 89429: the old copy, of a
    /// higher version, was taken over the new one, and no feed brought the new one again). The record as it is now is
    /// asked for once, as after a replayed 200, and taken as the server's answer of today; when it cannot be read,
    /// the replayed copy stands, judged as a replay.
    private func currentAfterRefusal<R: EditableRecord>(_ current: R, replayed: Bool) async -> (R, replayed: Bool) {
        guard replayed, let asItIs = await currentAfterReplay(current) else { return (current, replayed) }
        return (asItIs, false)
    }

    /// Applies a 412's `current` and gives the entry (if it is still there) a new key.
    private static func take<R: EditableRecord>(
        _ current: R, for entry: OutboxEntry, replayed: Bool, _ rebase: RecordRebase, _ db: Database
    ) throws -> (conflict: Bool, rewound: Bool) {
        var result: (conflict: Bool, rewound: Bool) = (false, false)
        let base = try BaseCopies.load(db, collection: R.collection, id: current.id)
        if !replayed, let base, current.version < base.version {
            // Not a stale answer: the server says this is the record now, older than what we had.
            try rebase.adoptRewound(current, db)
            result.rewound = true
        } else {
            result.conflict = try rebase.apply(current, db).conflict != nil
        }
        if let stored = try Outbox.entry(db, seq: entry.seq), stored.idempotencyKey == entry.idempotencyKey {
            try Outbox.rewrite(db, stored, fields: stored.fields)
        }
        return result
    }

    private func retry(_ entry: OutboxEntry, _ error: APIError, now: Timestamp) async throws(SyncStop) -> Result {
        let attempt = entry.attempts + 1
        // Given up only on failures of its own (a 500, a cut answer): a maintenance window of 502/503/504 pages
        // longer than the backoff's sum (about 8 minutes by default) killed every change waiting. The backoff still
        // grows with the attempts, up to its cap. A page that is not the API's (a proxy's, a firewall's) while the API
        // answers its health check, asked then, is this change's own (a firewall refusing what its text holds):
        // retried for ever, it stayed "failed", neither dead nor discardable, its record's changes held behind it.
        // The API's own 502/503/504 stay an outage: its health check may well answer through a maintenance window.
        let attemptsUsed = attempt >= configuration.retry.maxAttempts
        let notTheAPIs = if case .http(let failure) = error { !failure.isAPIAnswer } else { false }
        let apiAnswers = attemptsUsed && notTheAPIs ? await health.apiAnswers(api) : false
        let giveUp = attemptsUsed && (!error.isOutage || apiAnswers)
        let delay = configuration.retry.delay(
            afterAttempt: attempt, retryAfter: error.retryAfter, random: configuration.random())
        let next = giveUp ? nil : now.adding(milliseconds: delay.inMilliseconds)
        let rebase = recordRebase(entry.collection)
        try await write { db in
            guard giveUp else {
                return try Outbox.recordFailure(db, seq: entry.seq, error: error.description, nextAttempt: next)
            }
            // Given up: like a refused change, no longer shown in the record (base ⊕ live changes), so that its value
            // is never taken later for an edit another program made in the row and queued as a new change — which
            // would replace the dead one and forget that it may have been applied (in doubt).
            try SyncEngine.rendering(entry, rebase, db) {
                try Outbox.recordFailure(db, seq: entry.seq, error: error.description, nextAttempt: nil)
            }
        }
        return giveUp ? .dead : .retryLater(reason: error.description, outage: error.isOutage)
    }
}

/// The API's health check, asked at most once a push run and only when needed: does the API answer as a whole while
/// one change keeps meeting an outage's answer?
private final class HealthOfTheRun: Sendable {
    private let answer = Mutex<Bool?>(nil)

    func apiAnswers(_ api: APIClient) async -> Bool {
        if let known = answer.withLock({ $0 }) { return known }
        let answers: Bool
        do {
            _ = try await api.health()
            answers = true
        } catch {
            answers = false
        }
        answer.withLock { $0 = answers }
        return answers
    }
}
