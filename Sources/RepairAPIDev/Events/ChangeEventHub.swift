internal import Foundation
internal import RepairSyncModels
internal import Synchronization

/// The change notifications behind `GET /api/v1/events` (docs/api.md section 4.8): every committed change — its
/// global sequence number and collection, never its data — kept in a bounded ring for `Last-Event-ID` resume and
/// handed to every open stream through that stream's own bounded queue.
///
/// Changes are published from the store's commit hook, in commit order, so ids only grow. A resume is possible when
/// every change after the client's id is still in the ring (`floor` is the newest id no longer held); otherwise the
/// stream starts with a `reset`. A stream whose reader falls `queueCapacity` changes behind has its queue replaced by
/// one `reset`: a slow reader costs a bounded amount of memory, and learns it must pull everything.
final class ChangeEventHub: Sendable {
    struct Change: Sendable, Equatable {
        var id: Int64
        var collection: SyncCollection
    }

    /// What an open stream sends next.
    enum Item: Sendable, Equatable {
        case change(Change)
        /// The reader may have missed changes: pull everything. `id` is the newest change at that point.
        case reset(id: Int64)
    }

    /// The admin switches (`/admin/events`): the stream served (`on`), absent (`off`: 404) or refused
    /// (`unavailable`: 503); heartbeats sent or withheld (a stream that falls silent), and their interval.
    struct Switches: Sendable, Equatable {
        enum Mode: String, Sendable, Codable { case on, off, unavailable }
        var mode: Mode = .on
        var heartbeats = true
        var heartbeatInterval: Duration = .seconds(15)
    }

    /// How an opened stream begins.
    enum Opening: Sendable, Equatable {
        /// Fresh (`id` the newest change) or resumed (`id` the client's own, then `replay`: the changes after it).
        case ready(id: Int64, replay: [Change])
        /// The client's id cannot be resumed from (older than the ring, unknown, or from before a restart).
        case reset(head: Int64)
    }

    let ringCapacity: Int
    let queueCapacity: Int
    let maxStreams: Int
    private struct State {
        var ring: [Change?]
        var ringStart = 0
        var ringCount = 0
        /// The newest id whose change the ring no longer holds (or never held: before the hub started).
        var floor: Int64 = 0
        var head: Int64 = 0
        var streams: [UInt64: Subscription] = [:]
        var nextStream: UInt64 = 1
        var switches = Switches()
        var requests = 0
        var opened = 0
        var resumes = 0
        var resets = 0
        var overflows = 0
    }

    private let state: Mutex<State>

    init(ringCapacity: Int = 4096, queueCapacity: Int = 256, maxStreams: Int = 256) {
        self.ringCapacity = max(1, ringCapacity)
        self.queueCapacity = max(1, queueCapacity)
        self.maxStreams = max(1, maxStreams)
        state = Mutex(State(ring: Array(repeating: nil, count: max(1, ringCapacity))))
    }

    var switches: Switches {
        get { state.withLock { $0.switches } }
        set { state.withLock { $0.switches = newValue } }
    }

    /// For `/admin/events`.
    struct Snapshot: Sendable {
        var switches: Switches
        var openStreams: Int
        var head: Int64
        var floor: Int64
        var held: Int
        var requests: Int
        var opened: Int
        var resumes: Int
        var resets: Int
        var overflows: Int
    }

    var snapshot: Snapshot {
        state.withLock {
            Snapshot(
                switches: $0.switches, openStreams: $0.streams.count, head: $0.head, floor: $0.floor,
                held: $0.ringCount,
                requests: $0.requests, opened: $0.opened, resumes: $0.resumes, resets: $0.resets,
                overflows: $0.overflows)
        }
    }

    /// Counts a request for the stream (served or not).
    func countRequest() { state.withLock { $0.requests += 1 } }

    /// The store holds changes up to `sequence` that were never published (at start, after seeding): nothing before
    /// it can be resumed from.
    func rebase(head sequence: Int64) {
        state.withLock { state in
            guard sequence > state.head else { return }
            state.head = sequence
            state.floor = sequence
            state.ringStart = 0
            state.ringCount = 0
        }
    }

    /// A committed change (from the store's commit hook, in commit order).
    func publish(_ change: Change) {
        let woken = state.withLock { state -> [Subscription] in
            guard change.id > state.head else { return [] }
            state.head = change.id
            if state.ringCount == ringCapacity {
                if let evicted = state.ring[state.ringStart] { state.floor = evicted.id }
                state.ring[state.ringStart] = change
                state.ringStart = (state.ringStart + 1) % ringCapacity
            } else {
                state.ring[(state.ringStart + state.ringCount) % ringCapacity] = change
                state.ringCount += 1
            }
            for subscription in state.streams.values where subscription.enqueue(change, capacity: queueCapacity) {
                state.overflows += 1
            }
            return Array(state.streams.values)
        }
        for subscription in woken { subscription.wake() }
    }

    /// Opens a stream after `lastEventID` (nil: from now). Nil when `maxStreams` are open.
    func subscribe(lastEventID: String?) -> (Subscription, Opening)? {
        state.withLock { state -> (Subscription, Opening)? in
            guard state.streams.count < maxStreams else { return nil }
            let subscription = Subscription(id: state.nextStream)
            state.nextStream += 1
            state.streams[subscription.id] = subscription
            state.opened += 1
            let head = state.head
            guard let text = lastEventID?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
                return (subscription, .ready(id: head, replay: []))
            }
            guard let last = Int64(text), last >= state.floor, last <= head else {
                state.resets += 1
                return (subscription, .reset(head: head))
            }
            state.resumes += 1
            var replay: [Change] = []
            for offset in 0..<state.ringCount {
                if let change = state.ring[(state.ringStart + offset) % ringCapacity], change.id > last {
                    replay.append(change)
                }
            }
            return (subscription, .ready(id: last, replay: replay))
        }
    }

    func unsubscribe(_ subscription: Subscription) {
        _ = state.withLock { $0.streams.removeValue(forKey: subscription.id) }
    }

    /// Ends every open stream (their connections are cut); returns how many.
    func dropAll() -> Int {
        let dropped = state.withLock { state -> [Subscription] in
            let all = Array(state.streams.values)
            state.streams = [:]
            return all
        }
        for subscription in dropped { subscription.close() }
        return dropped.count
    }

    /// The server is stopping: every open stream ends now (a stream never completes by itself, and a graceful
    /// shutdown waits for requests in flight), and new ones are refused with 503.
    func close() {
        state.withLock { $0.switches.mode = .unavailable }
        _ = dropAll()
    }

    /// Wakes every open stream (after a switch changed, so the heartbeat interval applies at once).
    func wakeAll() {
        for subscription in state.withLock({ Array($0.streams.values) }) { subscription.wake() }
    }

    /// One open stream: a bounded queue of what to send, and a wait that ends on news, on a deadline or on close.
    final class Subscription: Sendable {
        let id: UInt64
        private struct Queue {
            var items: [Item] = []
            var closed = false
            var signalled = false
            var waiter: CheckedContinuation<Void, Never>?
        }

        private let queue = Mutex(Queue())

        init(id: UInt64) { self.id = id }

        /// Queues a change; past `capacity` the queue becomes one `reset`. Returns true when it overflowed.
        func enqueue(_ change: Change, capacity: Int) -> Bool {
            queue.withLock { queue in
                if case .reset? = queue.items.first, queue.items.count == 1 {
                    queue.items = [.reset(id: change.id)]
                    return false
                }
                if queue.items.count >= capacity {
                    queue.items = [.reset(id: change.id)]
                    return true
                }
                queue.items.append(.change(change))
                return false
            }
        }

        /// What is queued (emptying the queue), and whether the stream was closed.
        func drain() -> (items: [Item], closed: Bool) {
            queue.withLock { queue in
                let items = queue.items
                queue.items = []
                return (items, queue.closed)
            }
        }

        func close() {
            queue.withLock { $0.closed = true }
            wake()
        }

        func wake() {
            let waiter = queue.withLock { queue -> CheckedContinuation<Void, Never>? in
                let waiter = queue.waiter
                queue.waiter = nil
                if waiter == nil { queue.signalled = true }
                return waiter
            }
            waiter?.resume()
        }

        /// Returns on news, after `timeout`, or on cancellation.
        func wait(timeout: Duration) async {
            // Wakes the wait only when the timeout has passed: a timer cancelled because news ended the wait first
            // must not leave a signal behind, or every later wait would return at once and the stream would spin
            // (it did: two cores at full load and a growing heap for one quiet daemon, after the first change).
            let timer = Task { [weak self] in
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self?.wake()
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = queue.withLock { queue -> Bool in
                        if queue.signalled || queue.closed || !queue.items.isEmpty {
                            queue.signalled = false
                            return true
                        }
                        queue.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                wake()
            }
            // Ended before the timer if news came: the timer is done before the wait returns, so nothing of this
            // wait is left to act on the next one.
            timer.cancel()
            await timer.value
        }

        /// A wake-up is waiting for the next `wait` (news, a close, or a timer that fired with no one waiting).
        var hasPendingSignal: Bool { queue.withLock { $0.signalled } }
    }
}
