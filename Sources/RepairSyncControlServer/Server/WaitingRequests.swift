internal import NIOCore
internal import Synchronization

/// Request lines a connection has received and not yet begun to serve: counted on the event loop as each line is
/// decoded, taken off by the connection's task as it starts serving it. A connection with a request waiting is not
/// idle, even while its task has not got to it: under a flood of new connections, a client that has asked must not
/// be closed to make room before it is answered (`ConnectionTable`).
final class WaitingRequests: Sendable {
    private let count = Atomic(0)

    var any: Bool { count.load(ordering: .relaxed) > 0 }

    func taken() { count.subtract(1, ordering: .relaxed) }

    /// Counts each line the line decoder passes on (it sits right after the decoder).
    final class Counter: ChannelInboundHandler {
        typealias InboundIn = ControlFrame
        typealias InboundOut = ControlFrame

        private let requests: WaitingRequests

        init(_ requests: WaitingRequests) { self.requests = requests }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .line = unwrapInboundIn(data) { requests.count.add(1, ordering: .relaxed) }
            context.fireChannelRead(data)
        }
    }
}

/// An accepted connection, and the count of its requests waiting to be served.
struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>
    let waiting: WaitingRequests
}
