internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix

/// A slow link on loopback, needing no root: a TCP proxy that forwards every connection to `upstream`, holding each
/// byte back by a one-way `delay` in each direction (a round trip of twice that) and, when `bytesPerSecond` is set,
/// letting bytes through no faster than that in each direction. It counts the bytes it carries each way: what
/// crossed the link, headers included.
///
/// The kernel's own shaping (`tc … tbf` in a network namespace) needs root, and this kernel has no `netem` for delay;
/// this does both in user space, for tests and the bench.
///
/// ```swift
/// let link = try await ShapedLink.start(upstreamPort: backend.port, delay: .milliseconds(200), bytesPerSecond: 50_000)
/// // base_url: http://127.0.0.1:\(link.port) …
/// link.bytesDown   // bytes the server sent through it
/// try await link.stop()
/// ```
public final class ShapedLink: Sendable {
    public let port: Int
    private let channel: any Channel
    private let counts: NIOLockedValueBox<(up: Int, down: Int)>

    /// Bytes carried from clients to the upstream server.
    public var bytesUp: Int { counts.withLockedValue { $0.up } }
    /// Bytes carried from the upstream server to clients.
    public var bytesDown: Int { counts.withLockedValue { $0.down } }

    private init(port: Int, channel: any Channel, counts: NIOLockedValueBox<(up: Int, down: Int)>) {
        self.port = port
        self.channel = channel
        self.counts = counts
    }

    /// Listens on 127.0.0.1 (a free port) and forwards to `upstreamHost:upstreamPort`.
    public static func start(
        upstreamHost: String = "127.0.0.1", upstreamPort: Int, delay: Duration, bytesPerSecond: Int? = nil
    ) async throws -> ShapedLink {
        let counts = NIOLockedValueBox((up: 0, down: 0))
        let oneWay = TimeAmount.nanoseconds(
            delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { client in
                // The upstream connection first: the client's bytes are read only once there is somewhere to put them.
                ClientBootstrap(group: client.eventLoop)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .connect(host: upstreamHost, port: upstreamPort)
                    .flatMapThrowing { server in
                        try server.pipeline.syncOperations.addHandler(
                            Shaper(partner: client, delay: oneWay, bytesPerSecond: bytesPerSecond) { bytes in
                                counts.withLockedValue { $0.down += bytes }
                            })
                        try client.pipeline.syncOperations.addHandler(
                            Shaper(partner: server, delay: oneWay, bytesPerSecond: bytesPerSecond) { bytes in
                                counts.withLockedValue { $0.up += bytes }
                            })
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ShapedLink(port: channel.localAddress?.port ?? 0, channel: channel, counts: counts)
    }

    public func stop() async throws {
        try await channel.close().get()
    }

    /// One direction: each slice of what is read goes out to the partner when the link would deliver it — after the
    /// slices before it have passed at `bytesPerSecond`, plus `delay`. A close follows the last delivery.
    final class Shaper: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        /// Slices this large are sent on their own, so a large read trickles out as it would on a slow link.
        static let slice = 4096
        let partner: any Channel
        let delay: TimeAmount
        let bytesPerSecond: Int?
        let carried: @Sendable (Int) -> Void
        /// When the link is free to start sending the next slice, and when the last slice is delivered.
        private var free = NIODeadline.uptimeNanoseconds(0)
        private var lastDelivery = NIODeadline.uptimeNanoseconds(0)

        init(partner: any Channel, delay: TimeAmount, bytesPerSecond: Int?, carried: @escaping @Sendable (Int) -> Void)
        {
            self.partner = partner
            self.delay = delay
            self.bytesPerSecond = bytesPerSecond
            self.carried = carried
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            carried(buffer.readableBytes)
            let partner = self.partner
            while buffer.readableBytes > 0, let slice = buffer.readSlice(length: min(Self.slice, buffer.readableBytes))
            {
                let start = max(NIODeadline.now(), free)
                let sending =
                    bytesPerSecond.map {
                        TimeAmount.nanoseconds(Int64(slice.readableBytes) * 1_000_000_000 / Int64($0))
                    } ?? .zero
                free = start + sending
                // Strictly after the previous slice: deliveries keep their order.
                let delivery = max(free + delay, lastDelivery + .nanoseconds(1))
                lastDelivery = delivery
                context.eventLoop.scheduleTask(deadline: delivery) { partner.writeAndFlush(slice, promise: nil) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let partner = self.partner
            context.eventLoop.scheduleTask(deadline: max(NIODeadline.now(), lastDelivery + .nanoseconds(1))) {
                partner.close(promise: nil)
            }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
