public import Foundation
internal import RepairSyncControlClient
public import RepairSyncProtocol

/// A subscription to the daemon's `statusChanged` notifications, read on its own thread, that a test can wait on
/// for a status matching a condition (no polling). The reading thread ends when the daemon closes the connection,
/// or at `stop()`.
public final class StatusWatcher: @unchecked Sendable {
    private let condition = NSCondition()
    private var seen: [JSONValue] = []
    private var failure: String?
    /// The subscribed connection, for `stop()` (its reading thread owns it otherwise).
    private var client: ControlClient?

    /// Subscribes (on its own thread) and returns once the subscription is in place.
    public init(path: String) throws {
        let ready = DispatchSemaphore(value: 0)
        let setupError = NSLock()
        nonisolated(unsafe) var failedSetup: (any Error)?
        Thread { [self] in
            let client: ControlClient
            do {
                client = try ControlClient(path: path)
                let first = try client.call("status")
                condition.lock()
                seen.append(first)
                self.client = client
                condition.unlock()
                _ = try client.call("subscribe")
            } catch {
                setupError.withLock { failedSetup = error }
                ready.signal()
                return
            }
            ready.signal()
            while true {
                do {
                    let status = try client.nextNotification().params
                    condition.lock()
                    seen.append(status)
                    condition.broadcast()
                    condition.unlock()
                } catch {
                    condition.lock()
                    failure = "\(error)"
                    condition.broadcast()
                    condition.unlock()
                    return
                }
            }
        }.start()
        ready.wait()
        if let error = setupError.withLock({ failedSetup }) { throw error }
    }

    /// Waits until a status seen after `index` matches; returns its index, or nil after `timeout`.
    public func wait(after index: Int = -1, timeout: TimeInterval, for matches: @escaping @Sendable (JSONValue) -> Bool)
        async -> Int?
    {
        await withCheckedContinuation { continuation in
            Thread {
                let deadline = Date().addingTimeInterval(timeout)
                self.condition.lock()
                defer { self.condition.unlock() }
                while true {
                    if let found = self.seen.indices.first(where: { $0 > index && matches(self.seen[$0]) }) {
                        continuation.resume(returning: found)
                        return
                    }
                    if self.failure != nil || !self.condition.wait(until: deadline) {
                        continuation.resume(returning: nil)
                        return
                    }
                }
            }.start()
        }
    }

    /// Ends the subscription: the daemon stops sending, the reading thread ends. A watcher left subscribed costs the
    /// daemon a notification for every status change (and holds a connection that is never idle) until it stops.
    public func stop() {
        condition.lock()
        let client = client
        condition.unlock()
        client?.shutdown()
    }

    public var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return seen.count
    }

    /// Every status seen so far, the first one read before subscribing.
    public var statuses: [JSONValue] {
        condition.lock()
        defer { condition.unlock() }
        return seen
    }

    public var states: [String] {
        condition.lock()
        defer { condition.unlock() }
        return seen.compactMap { $0["state"]?.stringValue }
    }
}
