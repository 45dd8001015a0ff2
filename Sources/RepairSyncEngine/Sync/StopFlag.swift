internal import Synchronization

/// Set when the engine must stop: runs check it before each request and end at that boundary (everything
/// committed so far stays; nothing is half-applied).
final class StopFlag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() { value.withLock { $0 = true } }

    func check() throws(SyncStop) {
        if isSet { throw .stopped }
    }
}
