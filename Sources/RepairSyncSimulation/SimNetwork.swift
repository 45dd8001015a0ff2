public import RepairSyncEngine
internal import Synchronization

/// The engine's transport in the simulator: every request waits here until the simulator decides what happens to
/// it — delivered to the simulated server, failed before or after the server applied it, answered by a "proxy" —
/// so that the order of requests, faults and local operations is the seed's, not the scheduler's.
public final class SimNetwork: APITransport {
    struct Pending: Sendable {
        let id: Int
        let request: TransportRequest
        let reply: @Sendable (Result<TransportResponse, TransportFailure>) -> Void
    }

    private struct State {
        var pending: [Pending] = []
        var nextId = 0
    }

    private let state: Mutex<State>
    /// Told of every request that arrives (the simulator waits on it).
    private let wakeups: AsyncStream<Void>.Continuation

    /// Every request's method and path, in order, over the whole simulation (crashes included).
    let log: RequestLog

    init(wakeups: AsyncStream<Void>.Continuation, log: RequestLog) {
        self.wakeups = wakeups
        self.log = log
        state = Mutex(State())
    }

    /// Requests sent so far (over every network of one simulation, carried across crashes).
    var requestCount: Int { log.count }

    public func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse
    {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<TransportResponse, TransportFailure>, Never>) in
            log.append("\(request.method) \(request.path)")
            state.withLock { state in
                state.nextId += 1
                state.pending.append(Pending(id: state.nextId, request: request) { continuation.resume(returning: $0) })
            }
            wakeups.yield()
        }
        return try result.get()
    }

    /// The oldest request waiting for an answer.
    var waiting: Pending? { state.withLock { $0.pending.first } }

    var waitingCount: Int { state.withLock { $0.pending.count } }

    /// Every request waiting for an answer, oldest first.
    var waitingRequests: [TransportRequest] { state.withLock { $0.pending.map(\.request) } }

    /// Removes the oldest waiting request, to answer it.
    func take() -> Pending? {
        state.withLock { state in state.pending.isEmpty ? nil : state.pending.removeFirst() }
    }
}

/// The requests of one simulation, in order.
final class RequestLog: Sendable {
    private let entries = Mutex<[String]>([])

    var count: Int { entries.withLock { $0.count } }

    func append(_ entry: String) { entries.withLock { $0.append(entry) } }

    func slice(_ range: Range<Int>) -> [String] {
        entries.withLock { entries in Array(entries[max(0, range.lowerBound)..<min(entries.count, range.upperBound)]) }
    }
}
