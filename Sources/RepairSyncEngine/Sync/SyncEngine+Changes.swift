internal import Foundation
internal import GRDB
public import RepairSyncModels
internal import RepairSyncStore

/// Local changes, the outbox and conflicts, as the daemon and its clients see them.
extension SyncEngine {
    /// Changes fields of an order or device and queues the change (durable when this returns).
    @discardableResult
    public func update(_ collection: SyncCollection, id: String, fields: FieldValues) throws -> OutboxEntry {
        defer { refreshCounts() }
        return try changes.update(collection, id: id, fields: fields)
    }

    /// Writes and queues a new ticket message.
    @discardableResult
    public func createTicketMessage(ticketId: String, content: String, isInternal: Bool = false, id: String? = nil)
        throws -> TicketMessage
    {
        defer { refreshCounts() }
        return try changes.createTicketMessage(
            ticketId: ticketId, content: content, isInternal: isInternal, id: id ?? UUID().uuidString.lowercased())
    }

    /// Queues what another program changed in the store. Durable when this returns; concurrent calls share one
    /// commit, and one re-read of the counts.
    public nonisolated func queueChange(_ kind: LocalChanges.ChangeKind, id: String) async throws
        -> LocalChanges.QueueResult
    {
        let result = try await changes.queueChange(kind, id: id)
        await refreshOutboxCounts()
        return result
    }

    /// Changes not yet on the server and not given up on (pending, being sent, waiting to retry, held).
    public nonisolated func pendingChangesCount() throws -> Int {
        try store.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE state <> 'dead'") ?? 0
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

    /// Makes a dead entry pending again, with its attempts reset (same idempotency key: if the server did apply
    /// it, the replay says so).
    public func retryDead(seq: Int64) throws {
        defer { refreshCounts() }
        try store.write { db in
            guard let entry = try Outbox.entry(db, seq: seq), entry.state == .dead else {
                throw EngineError.notFound("dead change \(seq)")
            }
            try db.execute(
                sql: "UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = NULL WHERE seq = ?",
                arguments: [seq])
        }
    }

    /// Decides an open conflict. The entries it held are released (without the fields that lost) and pushed by
    /// the next run; the decision is written to the audit log.
    public func resolveConflict(id: Int64, _ decision: ConflictDecision) throws {
        defer { refreshCounts() }
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
