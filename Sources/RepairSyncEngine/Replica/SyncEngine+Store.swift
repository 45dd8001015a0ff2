internal import Foundation
internal import GRDB
internal import RepairSyncStore

/// The store as a whole: where it is, how big, a consistent copy, a check, a wipe — asked of the engine, which owns
/// it.
extension SyncEngine {
    /// The database file; nil for an in-memory store.
    public nonisolated var storePath: String? { store.path }

    /// The database and its WAL on disk, in bytes.
    public nonisolated var storeBytes: Int64 {
        store.path.map(ReplicaStore.bytesOnDisk(at:)) ?? 0
    }

    /// Writes a consistent copy of the store to `path` (SQLite's online backup: readers and the writer go on), mode
    /// 0600. Returns the copy's `integrity_check` problems (empty when sound).
    public nonisolated func backup(to path: String) throws -> [String] {
        try store.backup(to: path)
    }

    /// Deletes the store's files (database, WAL, shared memory, journal): the replica, cursors and outbox are gone.
    /// Returns the paths removed and the changes not yet on the server that went with them. Nothing may use the
    /// engine afterwards.
    ///
    /// The changes are counted on the writer, after every write acknowledged before, and writing ends there: a change
    /// acknowledged while the purge was on its way is counted (and, without `force`, refuses it), and one that comes
    /// later is refused (`StoreClosing`), never acknowledged and then deleted. Without `force` and with changes to
    /// lose it throws `EngineError.invalidValue` (field `force`) and the store goes on as before.
    public func purge(force: Bool) async throws -> (removed: [String], discardedChanges: Int) {
        let pending = try await store.endWrites { db in
            let pending = try Outbox.counts(db).notOnServer
            if pending > 0, !force {
                throw EngineError.invalidValue(
                    field: "force",
                    reason:
                        "\(pending) change(s) are not on the server yet and would be lost: sync first, or purge with force"
                )
            }
            return pending
        }
        await stop()
        try store.close()
        return (store.path.map(ReplicaStore.removeFiles(at:)) ?? [], pending)
    }

    /// The store no longer takes writes: a purge is under way (`StoreClosing` is what a write then meets).
    public nonisolated var isClosing: Bool { store.isClosing }

    /// The store's health for a doctor: `quick_check`, its size and the free space beside it.
    public nonisolated func storeHealth() -> StoreHealth {
        guard let path = store.path else { return StoreHealth(path: nil, problems: [], bytes: 0, freeBytes: nil) }
        let problems = (try? store.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }) ?? ["unreadable"]
        return StoreHealth(
            path: path, problems: problems == ["ok"] ? [] : problems, bytes: storeBytes,
            freeBytes: StoreHealth.freeBytes(beside: path))
    }
}

/// What a doctor reports of the store.
public struct StoreHealth: Sendable, Hashable {
    /// nil for an in-memory store.
    public var path: String?
    /// `quick_check`'s problems; empty when sound.
    public var problems: [String]
    public var bytes: Int64
    /// Free space on the store's filesystem for an unprivileged writer; nil when unknown.
    public var freeBytes: Int64?

    static func freeBytes(beside path: String) -> Int64? {
        let directory = (path as NSString).deletingLastPathComponent
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: directory.isEmpty ? "." : directory)
        return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value
    }
}
