internal import GRDB
internal import RepairSyncStore

/// A store read without the daemon, read-only (for `repairsyncd doctor` when no daemon runs, or as another user):
/// its `quick_check` and how many changes wait to be pushed. Never writes, never migrates.
public struct StoreInspection: Sendable, Hashable {
    /// `quick_check`'s problems; empty when sound.
    public var problems: [String]
    /// Changes not on the server yet (every outbox state but dead).
    public var pendingChanges: Int

    public static func inspect(path: String) throws -> StoreInspection {
        let queue = try ReplicaStore.readOnly(at: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let problems = try String.fetchAll(db, sql: "PRAGMA quick_check")
            let counts = try Outbox.counts(db)
            return StoreInspection(
                problems: problems == ["ok"] ? [] : problems, pendingChanges: counts.notOnServer)
        }
    }
}
