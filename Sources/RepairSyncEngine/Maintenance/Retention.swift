internal import GRDB
public import RepairSyncModels
public import RepairSyncStore

/// Optional cleanup of the replica (`retention.days`): orders collected or cancelled and their devices, closed
/// tickets and their messages, last updated more than `days` ago. Never a record with a pending change or an open
/// conflict, nor one a pending change depends on (the order of a changed device, the ticket of a new message).
/// Deletes in batches of `batchSize`, each its own short transaction, so readers and the engine are never held up.
/// A deleted record comes back if the server changes it again. The conflict log's resolved entries go too, once
/// resolved more than `days` ago (open ones wait for a decision and stay): a shop's years of conflicts stay bounded.
public struct Retention: Sendable {
    public struct Report: Sendable, Equatable, Codable {
        public var orders = 0
        public var devices = 0
        public var tickets = 0
        public var messages = 0
        /// Entries of the conflict log resolved before the cutoff.
        public var conflicts = 0

        public var total: Int { orders + devices + tickets + messages + conflicts }
    }

    let store: ReplicaStore
    let days: Int
    let batchSize: Int

    public init(store: ReplicaStore, days: Int, batchSize: Int = 500) {
        self.store = store
        self.days = days
        self.batchSize = batchSize
    }

    /// Removes what is eligible at `now`.
    public func run(now: Timestamp = .now()) async throws -> Report {
        let cutoff = now.adding(milliseconds: -Int64(days) * 86_400_000)
        var report = Report()
        (report.orders, report.devices) = try await remove(
            "orders", children: "devices", by: "order_id", cutoff: cutoff,
            eligible: """
                SELECT o.id FROM orders o
                WHERE o.status IN ('collected', 'cancelled') AND o.updated_at < ?
                  AND NOT \(Outbox.hasEntrySQL(collection: "'orders'", recordId: "o.id"))
                  AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.state = 'open' AND c.collection = 'orders' AND c.record_id = o.id)
                  AND NOT EXISTS (
                    SELECT 1 FROM devices d WHERE d.order_id = o.id AND (
                      \(Outbox.hasEntrySQL(collection: "'devices'", recordId: "d.id"))
                      OR EXISTS (SELECT 1 FROM conflicts c WHERE c.state = 'open' AND c.collection = 'devices' AND c.record_id = d.id)))
                LIMIT ?
                """)
        (report.tickets, report.messages) = try await remove(
            "tickets", children: "ticket_messages", by: "ticket_id", cutoff: cutoff,
            eligible: """
                SELECT t.id FROM tickets t
                WHERE t.status = 'closed' AND t.updated_at < ?
                  AND NOT \(Outbox.hasEntrySQL(orderKey: "'tickets:' || t.id"))
                  AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.state = 'open' AND c.collection = 'tickets' AND c.record_id = t.id)
                LIMIT ?
                """)
        report.conflicts = try await removeResolvedConflicts(before: cutoff)
        return report
    }

    /// Deletes the conflict log's entries resolved before `cutoff`, a batch per transaction.
    private func removeResolvedConflicts(before cutoff: Timestamp) async throws -> Int {
        let batchSize = batchSize
        return try await inBatches { db in
            try db.execute(
                sql: """
                    DELETE FROM conflicts WHERE id IN (
                        SELECT id FROM conflicts WHERE state = 'resolved' AND resolved_at < ? LIMIT ?)
                    """, arguments: [cutoff.millisecondsSince1970, batchSize])
            return (removed: db.changesCount, children: 0)
        }.removed
    }

    /// Deletes the `table` rows that `eligible` (cutoff, limit) selects, a batch per transaction, with their
    /// `children` rows (`by` their parent column): the delete triggers take only children not yet on the server.
    private func remove(_ table: String, children: String, by parent: String, cutoff: Timestamp, eligible: String)
        async throws -> (removed: Int, children: Int)
    {
        let batchSize = batchSize
        return try await inBatches { db in
            let ids = try String.fetchAll(db, sql: eligible, arguments: [cutoff, batchSize])
            guard !ids.isEmpty else { return (removed: 0, children: 0) }
            let marks = databaseQuestionMarks(count: ids.count)
            try db.execute(
                sql: "DELETE FROM \(children) WHERE \(parent) IN (\(marks))", arguments: StatementArguments(ids))
            let children = db.changesCount
            try db.execute(sql: "DELETE FROM \(table) WHERE id IN (\(marks))", arguments: StatementArguments(ids))
            return (removed: ids.count, children: children)
        }
    }

    /// Runs `batch`, each time its own transaction, until one removes fewer than `batchSize` rows; returns the sums.
    private func inBatches(
        _ batch: @escaping @Sendable (Database) throws -> (removed: Int, children: Int)
    ) async throws -> (removed: Int, children: Int) {
        var total = (removed: 0, children: 0)
        while true {
            let done = try await store.write(batch)
            total.removed += done.removed
            total.children += done.children
            if done.removed < batchSize { return total }
            await Task.yield()
        }
    }
}
