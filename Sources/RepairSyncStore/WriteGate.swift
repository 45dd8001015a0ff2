internal import Synchronization

/// Whether the store still takes writes. Closed once for good, on the writer (`ReplicaStore.endWrites`), so that
/// every write is either before the close — committed and seen by what closed it — or refused with `StoreClosing`,
/// never committed behind a purge's back and lost with the file.
final class WriteGate: Sendable {
    private let closed = Mutex(false)

    var isClosed: Bool { closed.withLock { $0 } }

    func close() { closed.withLock { $0 = true } }

    /// Throws once the gate is closed. Called before a write is queued (a quick refusal) and again on the writer,
    /// inside the write's transaction (the check that counts: a write queued just before the close runs after it).
    func check() throws(StoreClosing) {
        if isClosed { throw StoreClosing() }
    }
}

/// A write refused because the store is being closed for good (a purge): nothing of it was written.
public struct StoreClosing: Error, CustomStringConvertible, Sendable {
    public var description: String { "the store is being closed: nothing was written" }
}
