internal import NIOCore
internal import Synchronization

/// What one connection is doing, as far as choosing a connection to close at a limit needs to know
/// (`ConnectionTable`): request lines received and not yet begun — counted on the event loop as each line is decoded,
/// so a connection that has asked is not idle even while its task has not got to the request — and whether a request
/// is being served, set by the connection's task. Atomics: neither side waits for the other, and a verdict taken on
/// the event loop sees both.
final class ConnectionActivity: Sendable {
    private let waiting = Atomic(0)
    private let serving = Atomic(false)

    /// No request received and waiting, none being served.
    var isIdle: Bool { !serving.load(ordering: .acquiring) && waiting.load(ordering: .acquiring) == 0 }

    /// The connection's task takes a received request: serving before it stops waiting, so the connection is never
    /// idle while a request is in hand.
    func beginServing() {
        serving.store(true, ordering: .releasing)
        waiting.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// The request was answered.
    func endServing() { serving.store(false, ordering: .releasing) }

    /// An empty line: nothing to serve.
    func skip() { waiting.subtract(1, ordering: .acquiringAndReleasing) }

    /// Counts each line the line decoder passes on (it sits right after the decoder).
    final class Counter: ChannelInboundHandler {
        typealias InboundIn = ControlFrame
        typealias InboundOut = ControlFrame

        private let activity: ConnectionActivity

        init(_ activity: ConnectionActivity) { self.activity = activity }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .line = unwrapInboundIn(data) { activity.waiting.add(1, ordering: .acquiringAndReleasing) }
            context.fireChannelRead(data)
        }
    }
}

/// An accepted connection, and what it is doing.
struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>
    let activity: ConnectionActivity
}
