internal import RepairSyncEngine
internal import RepairSyncProtocol

extension ConflictEntry {
    /// An audit-log entry as the socket shows it.
    init(_ record: ConflictRecord) {
        self.init(
            id: record.id, collection: record.collection.name, recordId: record.recordId, fields: record.fields,
            base: record.base, local: record.local, remote: record.remote, remoteVersion: record.remoteVersion,
            policy: record.policy, outcome: ConflictOutcome(rawValue: record.outcome.rawValue), open: record.isOpen,
            detectedAt: record.detectedAt, resolvedAt: record.resolvedAt)
    }
}
