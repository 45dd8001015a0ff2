internal import GRDB
public import RepairSyncModels
public import RepairSyncStore

/// Optional cleanup of the replica (`retention.days`): orders collected or cancelled and their devices, closed
/// tickets and their messages, last updated more than `days` ago. Never a record with a pending change or an open
/// conflict, nor one a pending change depends on (the order of a changed device, the ticket of a new message).
/// Deletes in batches of `batchSize`, each its own short transaction, so readers and the engine are never held up.
/// A deleted record comes back if the server changes it again.
public struct Retention: Sendable {
    public struct Report: Sendable, Equatable, Codable {
        public var orders = 0
        public var devices = 0
        public var tickets = 0
        public var messages = 0

        public var total: Int { orders + devices + tickets + messages }
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
        while true {
            let (orders, devices) = try await store.write { db in
                let ids = try String.fetchAll(
                    db,
                    sql: """
                        SELECT o.id FROM orders o
                        WHERE o.status IN ('collected', 'cancelled') AND o.updated_at < ?
                          AND NOT EXISTS (SELECT 1 FROM outbox x WHERE x.collection = 'orders' AND x.record_id = o.id)
                          AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.state = 'open' AND c.collection = 'orders' AND c.record_id = o.id)
                          AND NOT EXISTS (
                            SELECT 1 FROM devices d WHERE d.order_id = o.id AND (
                              EXISTS (SELECT 1 FROM outbox x WHERE x.collection = 'devices' AND x.record_id = d.id)
                              OR EXISTS (SELECT 1 FROM conflicts c WHERE c.state = 'open' AND c.collection = 'devices' AND c.record_id = d.id)))
                        LIMIT ?
                        """, arguments: [cutoff, batchSize])
                guard !ids.isEmpty else { return (0, 0) }
                let marks = databaseQuestionMarks(count: ids.count)
                let devices = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM devices WHERE order_id IN (\(marks))", arguments: StatementArguments(ids)) ?? 0
                // The orders_delete_devices trigger takes their devices.
                try db.execute(sql: "DELETE FROM orders WHERE id IN (\(marks))", arguments: StatementArguments(ids))
                return (ids.count, devices)
            }
            report.orders += orders
            report.devices += devices
            if orders < batchSize { break }
            await Task.yield()
        }
        while true {
            let (tickets, messages) = try await store.write { db in
                let ids = try String.fetchAll(
                    db,
                    sql: """
                        SELECT t.id FROM tickets t
                        WHERE t.status = 'closed' AND t.updated_at < ?
                          AND NOT EXISTS (SELECT 1 FROM outbox x WHERE x.order_key = 'tickets:' || t.id)
                          AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.state = 'open' AND c.collection = 'tickets' AND c.record_id = t.id)
                        LIMIT ?
                        """, arguments: [cutoff, batchSize])
                guard !ids.isEmpty else { return (0, 0) }
                let marks = databaseQuestionMarks(count: ids.count)
                let messages = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM ticket_messages WHERE ticket_id IN (\(marks))",
                    arguments: StatementArguments(ids)) ?? 0
                // The tickets_delete_messages trigger takes their messages.
                try db.execute(sql: "DELETE FROM tickets WHERE id IN (\(marks))", arguments: StatementArguments(ids))
                return (ids.count, messages)
            }
            report.tickets += tickets
            report.messages += messages
            if tickets < batchSize { break }
            await Task.yield()
        }
        return report
    }
}
