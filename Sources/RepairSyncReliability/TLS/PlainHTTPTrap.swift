internal import Foundation
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix

/// A port on loopback in front of an HTTPS server that catches plain text, for tests of “never a fallback to plain
/// HTTP”: a connection that opens with a TLS handshake record (first byte 0x16) is forwarded to the server, so a
/// client sees the server's certificate; a connection that opens with anything else — `GET /api/v1/… HTTP/1.1` — is
/// recorded (its first line) and closed unanswered. Plain HTTP and TLS on the same host and port: whatever a client
/// falls back to after refusing the certificate arrives here.
///
/// ```swift
/// let trap = try await PlainHTTPTrap.start(upstreamPort: backend.port)
/// // base_url: https://127.0.0.1:\(trap.port) …
/// trap.tlsConnections   // handshakes forwarded to the server
/// trap.plainTextLines   // [] unless something spoke plain text here
/// try await trap.stop()
/// ```
public final class PlainHTTPTrap: Sendable {
    public let port: Int
    private let channel: any Channel
    private let state: NIOLockedValueBox<State>

    struct State {
        var tlsConnections = 0
        var plainTextLines: [String] = []
    }

    /// Connections that opened with a TLS handshake, forwarded to the server.
    public var tlsConnections: Int { state.withLockedValue { $0.tlsConnections } }
    /// The first line of each connection that opened with anything but TLS (a plain HTTP request line).
    public var plainTextLines: [String] { state.withLockedValue { $0.plainTextLines } }

    private init(port: Int, channel: any Channel, state: NIOLockedValueBox<State>) {
        self.port = port
        self.channel = channel
        self.state = state
    }

    /// Listens on 127.0.0.1 (a free port); TLS goes on to `upstreamHost:upstreamPort`.
    public static func start(upstreamHost: String = "127.0.0.1", upstreamPort: Int) async throws -> PlainHTTPTrap {
        let state = NIOLockedValueBox(State())
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                // The upstream connection first: the client's bytes are read only once there is somewhere to put
                // them (a plain-text connection closes it again unused).
                ClientBootstrap(group: client.eventLoop)
                    .connect(host: upstreamHost, port: upstreamPort)
                    .flatMapThrowing { server in
                        try server.pipeline.syncOperations.addHandler(ConnectProxy.Splice(partner: client))
                        try client.pipeline.syncOperations.addHandler(Sniffer(upstream: server, state: state))
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return PlainHTTPTrap(port: channel.localAddress?.port ?? 0, channel: channel, state: state)
    }

    public func stop() async throws {
        try await channel.close().get()
    }

    /// Decides by the first byte: TLS is forwarded from then on; plain text is held until its first line, recorded,
    /// and the connection closed.
    final class Sniffer: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let upstream: any Channel
        let state: NIOLockedValueBox<State>
        private var isTLS: Bool?
        private var plain = ByteBuffer()
        private var recorded = false

        init(upstream: any Channel, state: NIOLockedValueBox<State>) {
            self.upstream = upstream
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            if isTLS == nil {
                guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
                // 0x16: a TLS record of type handshake — every ClientHello starts so.
                isTLS = first == 0x16
                if first == 0x16 { state.withLockedValue { $0.tlsConnections += 1 } }
            }
            if isTLS == true {
                upstream.writeAndFlush(bytes, promise: nil)
                return
            }
            guard !recorded else { return }
            plain.writeBuffer(&bytes)
            let text = String(buffer: plain)
            guard let end = text.range(of: "\r\n")?.lowerBound ?? (plain.readableBytes > 4096 ? text.endIndex : nil)
            else { return }
            record(String(text[..<end]))
            upstream.close(promise: nil)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            // Plain text that ended before a whole line is recorded too.
            if isTLS == false, !recorded { record(String(buffer: plain)) }
            upstream.close(promise: nil)
            context.fireChannelInactive()
        }

        private func record(_ line: String) {
            recorded = true
            state.withLockedValue { $0.plainTextLines.append(line) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
