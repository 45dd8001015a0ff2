public import RepairSyncModels

/// Things that happen during a run, for logs and for tests that act at a precise point (e.g. a crash test that
/// kills the process after the 100th push).
public enum EngineEvent: Sendable {
    /// A change is about to be sent (its state is in flight).
    case sending(seq: Int64, collection: SyncCollection, id: String)
    /// The server accepted the change; its acknowledgement is about to be committed locally. A process that stops
    /// here replays the change with the same idempotency key after a restart.
    case accepted(seq: Int64, collection: SyncCollection, id: String)
    /// The acknowledgement is committed: the change is done.
    case pushed(seq: Int64, collection: SyncCollection, id: String)
    /// A changes page arrived and decoded; it is about to be applied with its cursor.
    case pageReceived(collection: SyncCollection, records: Int, deleted: Int)
    case pageApplied(collection: SyncCollection, records: Int, deleted: Int, hasMore: Bool)
    case cursorReset(collection: SyncCollection)
    case runFinished(SyncReport)
}

/// Delivers events to one optional handler.
public struct EngineEvents: Sendable {
    let handler: (@Sendable (EngineEvent) -> Void)?

    public init(_ handler: (@Sendable (EngineEvent) -> Void)? = nil) { self.handler = handler }

    func emit(_ event: EngineEvent) { handler?(event) }
}
