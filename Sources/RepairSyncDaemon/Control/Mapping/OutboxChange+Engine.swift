internal import RepairSyncEngine
internal import RepairSyncProtocol

extension OutboxChange {
    /// An outbox entry as the socket shows it.
    init(_ entry: OutboxEntry) {
        self.init(
            seq: entry.seq, collection: entry.collection.name, recordId: entry.recordId, orderKey: entry.orderKey,
            kind: Operation(rawValue: entry.kind.rawValue), fields: entry.fields, idempotencyKey: entry.idempotencyKey,
            state: ChangeState(rawValue: entry.state.rawValue), attempts: entry.attempts, sent: entry.sent,
            nextAttemptAt: entry.nextAttemptAt, lastError: entry.lastError, createdAt: entry.createdAt,
            editedAt: entry.editedAt, dependsOn: entry.dependsOn, blockedBy: entry.blockedBy,
            priority: Priority(rawValue: entry.priority.name))
    }
}
