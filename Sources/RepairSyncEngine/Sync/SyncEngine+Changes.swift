internal import Foundation
internal import GRDB
public import RepairSyncModels
internal import RepairSyncStore

/// Local changes, the outbox and conflicts, as the daemon and its clients see them.
extension SyncEngine {
    /// Changes fields of an order or device and queues the change (durable when this returns, and shown in the
    /// status's counts). Concurrent calls share one commit, and one read of the counts in it.
    @discardableResult
    public nonisolated func update(_ collection: SyncCollection, id: String, fields: FieldValues) async throws
        -> OutboxEntry
    {
        let entry = try await changes.update(collection, id: id, fields: fields)
        // The edit of a row another program inserted queued its creation (and its parents' if they were inserted
        // too): those rows count from now on.
        if entry.kind == .create { await recountBookedIn() }
        return entry
    }

    /// Rows another program inserted count in the status from their creation's queueing on (with any inserted parent
    /// queued with them): the three tables of records booked in are counted again.
    private func recountBookedIn() {
        refreshCounts(recounting: [.clients, .orders, .devices])
    }

    /// Writes and queues a new ticket message (durable when this returns; concurrent calls share one commit).
    @discardableResult
    public nonisolated func createTicketMessage(
        ticketId: String, content: String, isInternal: Bool = false, id: String? = nil
    ) async throws -> TicketMessage {
        let message = try await changes.createTicketMessage(
            ticketId: ticketId, content: content, isInternal: isInternal, id: id ?? UUID().uuidString.lowercased())
        // A new row: the messages' count changes too.
        await refreshCounts(recounting: [.ticketMessages])
        return message
    }

    /// Creates a client here (in the replica at once) and queues its creation; durable when this returns.
    @discardableResult
    public func createClient(_ new: LocalChanges.NewRecord) throws -> Client {
        defer { refreshCounts() }
        return try changes.createClient(new)
    }

    /// Creates an order, and the devices given with it, here; queued in one transaction.
    @discardableResult
    public func createOrder(_ new: LocalChanges.NewRecord, devices: [LocalChanges.NewRecord] = []) throws
        -> (order: Order, devices: [Device])
    {
        defer { refreshCounts() }
        return try changes.createOrder(new, devices: devices)
    }

    /// Creates a device on an order here and queues its creation.
    @discardableResult
    public func createDevice(_ new: LocalChanges.NewRecord) throws -> Device {
        defer { refreshCounts() }
        return try changes.createDevice(new)
    }

    /// Queues what another program changed in the store. Durable when this returns, and shown in the status's
    /// counts; concurrent calls share one commit, and one read of the counts in it.
    public nonisolated func queueChange(_ kind: LocalChanges.ChangeKind, id: String) async throws
        -> LocalChanges.QueueResult
    {
        let (result, create) = try await changes.queueChange(kind, id: id)
        // A row another program inserted (and any inserted parent queued with it) counts in the status from its
        // creation's queueing on — an "updated" row that another program inserted and never queued too, queued as
        // its creation.
        if create { await recountBookedIn() }
        return result
    }

    /// Changes not yet on the server and not given up on (pending, being sent, waiting to retry, held).
    public nonisolated func pendingChangesCount() throws -> Int {
        try store.read { db in
            try Outbox.counts(db).notOnServer
        }
    }

    /// Every outbox entry, oldest first.
    public nonisolated func outboxEntries() throws -> [OutboxEntry] {
        try store.read { db in try Outbox.all(db) }
    }

    /// The conflict audit log, newest first.
    public nonisolated func conflicts(openOnly: Bool = false, limit: Int = 1000) throws -> [ConflictRecord] {
        try store.read { db in try ConflictLog.list(db, openOnly: openOnly, limit: limit) }
    }

    /// Makes a dead entry pending again, with its attempts reset, and shows its values in the record again. A change
    /// the server refused goes out as a new request (new key, against the base of the moment it is sent); one that
    /// died in doubt keeps its key, so that the replay tells whether the server applied it.
    ///
    /// An entry that is dead only because a create it waits for is dead (`blockedBy`) is retried through that create:
    /// reviving a create brings back everything that was dead because of it.
    public func retryDead(seq: Int64) throws {
        defer { refreshCounts(recounting: []) }
        let rebase = recordRebase(for: nil)
        try store.write { db in
            guard var entry = try Outbox.entry(db, seq: seq), entry.state == .dead else {
                throw EngineError.notFound("dead change \(seq)")
            }
            if let root = entry.blockedBy,
                let create = try Outbox.all(db).first(where: { $0.orderKey == root && $0.kind == .create }),
                create.state == .dead
            {
                entry = create
            }
            try Self.rendering(entry, rebase, db) { try Outbox.revive(db, entry) }
        }
    }

    /// Gives up a dead change for good: it leaves the outbox, the audit log records its values, and the record shows
    /// the server's values again (with the record's other pending changes on top). A new record that was refused
    /// (a message, or a client, an order or a device created here) leaves the replica with it, and so does
    /// everything that waited for it — its own later edits, the records created under it (by the engine, or inserted
    /// by another program and not queued yet) — each in the audit log. Returns the entry as it was.
    @discardableResult
    public func discard(seq: Int64) throws -> OutboxEntry {
        // A refused new message leaves the replica with it, and a refused create its record with its children.
        defer { refreshCounts(recounting: [.ticketMessages, .clients, .orders, .devices]) }
        let now = clock.now()
        let rebase = recordRebase(for: nil)
        let policies = configuration
        return try store.write { db in
            guard let entry = try Outbox.entry(db, seq: seq), entry.state == .dead else {
                throw EngineError.notFound("dead change \(seq)")
            }
            var discarded = [entry]
            if entry.kind == .create, entry.collection != .ticketMessages {
                // Rows another program inserted under these records and never queued are booked in under them too:
                // queued first (as the next run would), they wait for the dead create and go with it — never sent
                // later as children of a parent that is gone.
                while try rebase.queueEditedRows(limit: 1000, db).looked == 1000 {}
                let keys = try Outbox.dependentKeys(db, of: entry.orderKey)
                discarded += try Outbox.all(db).filter { keys.contains($0.orderKey) && $0.seq != entry.seq }
            }
            for change in discarded {
                let base = try BaseCopies.load(db, collection: change.collection, id: change.recordId)
                try ConflictLog.record(
                    db, collection: change.collection, id: change.recordId, fields: change.fields.keys.sorted(),
                    base: base?.fields ?? [:], local: change.fields, remote: base?.fields ?? [:],
                    remoteVersion: base?.version, policy: policies.policy(for: change.collection).rawValue,
                    outcome: .discarded, now: now)
                try Self.rendering(change, rebase, db) { try Outbox.remove(db, seq: change.seq) }
                // One in doubt may have been applied: its values stay evidence of our own write until the server's
                // next copy, so that they are never taken for another user's edit.
                try BaseCopies.rememberGoneInDoubt(db, change)
            }
            // Records that exist only here go with their creates (children first: an order's row takes its devices').
            for change in discarded.reversed() where change.kind == .create {
                try db.execute(
                    sql: "DELETE FROM \(change.collection.name) WHERE id = ? AND synced_at IS NULL",
                    arguments: [change.recordId])
            }
            return entry
        }
    }

    /// Runs `change` on an entry and writes its record's editable columns again as base ⊕ live entries.
    static func rendering(
        _ entry: OutboxEntry, _ rebase: RecordRebase, _ db: Database, change: () throws -> Void
    ) throws {
        switch (entry.kind, entry.collection) {
        case (.update, .orders): try rebase.render(Order.self, id: entry.recordId, db, changing: change)
        case (.update, .devices): try rebase.render(Device.self, id: entry.recordId, db, changing: change)
        default: try change()
        }
    }

    /// The rebase settings of this moment, for `collection`'s policy (any, when the caller only renders rows).
    nonisolated func recordRebase(for collection: SyncCollection?) -> RecordRebase {
        RecordRebase(
            policy: collection.map(configuration.policy(for:)) ?? .merge,
            clockOffsetMilliseconds: api.clockOffsetMilliseconds, now: clock.now(),
            cipher: configuration.passcodeCipher)
    }

    /// Decides an open conflict. The entries it held are released (without the fields that lost) and pushed by
    /// the next run; the decision is written to the audit log.
    public func resolveConflict(id: Int64, _ decision: ConflictDecision) throws {
        defer { refreshCounts(recounting: []) }
        let now = clock.now()
        try store.write { db in
            guard let conflict = try ConflictLog.conflict(db, id: id), conflict.isOpen else {
                throw EngineError.notFound("open conflict \(id)")
            }
            let drop: Set<String>
            let outcome: ConflictRecord.Outcome
            switch decision {
            case .keepLocal:
                (drop, outcome) = ([], .keptLocal)
            case .keepRemote:
                (drop, outcome) = (Set(conflict.fields), .keptRemote)
            case .perField(let choices):
                drop = Set(conflict.fields.filter { choices[$0] == false })
                outcome = drop.isEmpty ? .keptLocal : drop.count == conflict.fields.count ? .keptRemote : .merged
            }
            let base = try BaseCopies.load(db, collection: conflict.collection, id: conflict.recordId)
            for entry in try Outbox.entries(db, collection: conflict.collection, id: conflict.recordId)
            where entry.state == .held {
                let fields = entry.fields.filter { !drop.contains($0.key) }
                if fields.isEmpty {
                    try Outbox.remove(db, seq: entry.seq)
                } else {
                    try Outbox.rewrite(db, entry, fields: fields, state: .pending)
                }
            }
            for field in drop.sorted() {
                try db.execute(
                    sql: "UPDATE \(conflict.collection.name) SET \(field) = ? WHERE id = ?",
                    arguments: [base?.fields[field] ?? nil, conflict.recordId])
            }
            try ConflictLog.close(db, id: id, outcome: outcome, now: now)
        }
    }
}
