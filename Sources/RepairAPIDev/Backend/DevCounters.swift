internal import Synchronization

/// What the development backend has done, for tests and the soak to read through `GET /admin/counters`.
final class DevCounters: Sendable {
    struct Values: Sendable {
        var requests = 0
        var messagesCreated = 0
        var messageReplays = 0
        var patchesApplied = 0
        /// Records created through `POST /{clients|orders|devices}`, per collection.
        var recordsCreated: [String: Int] = [:]
        /// Creates answered with the existing record (the same id and body again, without a remembered key).
        var createReplays = 0
        var idempotentReplays = 0
        var versionConflicts = 0
        var faultsInjected: [String: Int] = [:]
        var retryAfterViolations = 0
        /// Changes pages answered, per collection.
        var pagesServed: [String: Int] = [:]
        /// Changes pages answered for a cursor (or the feed's start) already answered before: a client that
        /// fetched a page again, e.g. after a crash before the page was committed.
        var pagesRepeated: [String: Int] = [:]
        /// `/api/v1` answer bodies as sent (compressed where they were), and as they would have been unencoded.
        var responseBodyBytes = 0
        var responseBodyBytesUnencoded = 0
        /// Answers sent gzip-compressed (the compression faults included).
        var compressedResponses = 0
    }

    private let values = Mutex(Values())
    /// The write requests received, with their keys and answers (`GET /admin/writes`).
    let writes = WriteLog()
    /// Every (collection, cursor) answered so far.
    private let servedCursors = Mutex(Set<String>())

    /// Counts a changes page answered with 200 for `cursor` (nil: the start of the feed).
    func pageServed(collection: String, cursor: String?) {
        let repeated = !servedCursors.withLock { $0.insert(collection + "|" + (cursor ?? "")).inserted }
        update {
            $0.pagesServed[collection, default: 0] += 1
            if repeated { $0.pagesRepeated[collection, default: 0] += 1 }
        }
    }

    func update(_ body: (inout Values) -> Void) {
        values.withLock { body(&$0) }
    }

    var snapshot: Values { values.withLock { $0 } }
}
