internal import RepairSyncModels
internal import Synchronization

/// The collections the event stream announced since the scheduler last looked. However many announcements a burst
/// brings, and however long the run in progress takes, they make one set (at most every collection) and one
/// mailbox event: `add` says whether to post one, `take` empties the set and re-arms it.
final class ServerChangeInbox: Sendable {
    private let pending = Mutex<(collections: Set<SyncCollection>, posted: Bool)>(([], false))

    /// Adds `collections`; true when the scheduler must be woken (nothing was waiting for it yet).
    func add(_ collections: Set<SyncCollection>) -> Bool {
        pending.withLock { pending in
            pending.collections.formUnion(collections)
            defer { pending.posted = true }
            return !pending.posted
        }
    }

    func take() -> Set<SyncCollection> {
        pending.withLock { pending in
            defer { pending = ([], false) }
            return pending.collections
        }
    }
}
