public import RepairSyncProtocol
internal import Synchronization

/// What a method sees of the connection it was called on: who the peer is, and a way to receive notifications
/// (`subscribe`).
public struct ControlRequestContext: Sendable {
    public let peer: ControlPeer
    let connection: ControlConnection

    /// Sends `method` notifications with each element of `stream` as params, until the stream ends or the
    /// connection closes. One subscription per connection; a client that falls more than the connection's
    /// notification limit behind is disconnected (it can reconnect and read `status`), so nothing is buffered
    /// without bound.
    public func subscribe(method: String, to stream: some AsyncSequence<JSONValue, Never> & Sendable)
        throws(JSONRPCError)
    {
        guard
            connection.subscriptions.withLock({ pending in
                guard !pending.subscribed else { return false }
                pending.subscribed = true
                pending.stream = stream
                pending.method = method
                return true
            })
        else {
            throw JSONRPCError.invalidRequest("this connection is already subscribed")
        }
        connection.subscriptionAdded.yield()
    }

    /// Sends a notification on this connection before the reply, waiting until it is written: a method streaming a
    /// large result (a backup) goes at the client's pace, buffering nothing.
    public func stream(method: String, params: JSONValue) async throws {
        guard let send = connection.streamSender.withLock({ $0 }) else { throw CancellationError() }
        try await send(JSONRPCDispatcher<ControlRequestContext>.notification(method, params: params))
    }

    /// Runs `action` once the reply to the current request has been written (e.g. stop the daemon after `purge`
    /// answered).
    public func afterReply(_ action: @escaping @Sendable () async -> Void) {
        connection.afterReply.withLock { $0.append(action) }
    }

    public init(peer: ControlPeer) {
        self.peer = peer
        connection = ControlConnection(maxQueuedNotifications: 0)
    }

    init(peer: ControlPeer, connection: ControlConnection) {
        self.peer = peer
        self.connection = connection
    }
}

/// The server's side of one connection: the subscription waiting to be served.
final class ControlConnection: Sendable {
    struct Subscription {
        var subscribed = false
        var stream: (any AsyncSequence<JSONValue, Never> & Sendable)?
        var method = ""
    }

    let subscriptions = Mutex(Subscription())
    let afterReply = Mutex<[@Sendable () async -> Void]>([])
    /// Writes one line and returns once it is written (set by the server for the connection's lifetime).
    let streamSender = Mutex<(@Sendable (String) async throws -> Void)?>(nil)
    let subscriptionAdded: AsyncStream<Void>.Continuation
    let subscriptionSignals: AsyncStream<Void>
    let maxQueuedNotifications: Int

    init(maxQueuedNotifications: Int) {
        self.maxQueuedNotifications = maxQueuedNotifications
        (subscriptionSignals, subscriptionAdded) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// A method asked for a subscription on this connection.
    var isSubscribed: Bool { subscriptions.withLock { $0.subscribed } }

    /// The subscription, once a method asked for one.
    func takeSubscription() -> (method: String, stream: any AsyncSequence<JSONValue, Never> & Sendable)? {
        subscriptions.withLock { state in
            guard let stream = state.stream else { return nil }
            state.stream = nil
            return (state.method, stream)
        }
    }
}
