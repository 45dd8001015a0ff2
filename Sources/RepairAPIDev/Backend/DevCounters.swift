internal import Synchronization

/// What the development backend has done, for tests and the soak to read through `GET /admin/counters`.
final class DevCounters: Sendable {
    struct Values: Sendable {
        var requests = 0
        var messagesCreated = 0
        var messageReplays = 0
        var patchesApplied = 0
        var idempotentReplays = 0
        var versionConflicts = 0
        var faultsInjected: [String: Int] = [:]
        var retryAfterViolations = 0
    }

    private let values = Mutex(Values())

    func update(_ body: (inout Values) -> Void) {
        values.withLock { body(&$0) }
    }

    var snapshot: Values { values.withLock { $0 } }
}
