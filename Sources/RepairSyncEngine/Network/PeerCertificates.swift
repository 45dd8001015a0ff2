internal import Foundation
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix
internal import NIOSOCKS
internal import NIOSSL

/// Fetches the certificate chain a TLS server presents — directly, or through the same proxy as the API's requests —
/// without trusting it: the handshake is abandoned as soon as the chain has arrived, so nothing is ever sent over
/// the connection. Used to say *why* a certificate was refused (`CertificateDiagnosis`) and, by `doctor`, when it
/// expires.
///
/// ```swift
/// let chain = try await PeerCertificates.fetch(host: "api.example", port: 443, settings: settings)
/// ```
enum PeerCertificates {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The certificates the server sent (its own first, then the intermediates it chose to send), as DER.
    static func fetch(
        host: String, port: Int, settings: TransportSettings, timeout: Duration = .seconds(5),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> [[UInt8]] {
        var tls = try settings.tlsConfiguration()
        tls.applicationProtocols = ["http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let capture = ChainCapture(eventLoop: group.next())
        let sniName = Self.isIPAddress(host) ? nil : host
        let target = (host: host, port: port)
        let bootstrap = ClientBootstrap(group: capture.eventLoop)
            .connectTimeout(.init(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tlsHandler = try NIOSSLClientHandler(context: context, serverHostname: sniName) {
                        chain, verdict in
                        capture.received(chain)
                        // Never trusted: the handshake stops here and no byte of a request goes out.
                        verdict.succeed(NIOSSLVerificationResult.failed)
                    }
                    let sync = channel.pipeline.syncOperations
                    switch settings.proxy?.kind {
                    case nil:
                        try sync.addHandler(tlsHandler)
                    case .http?:
                        try sync.addHandler(
                            ConnectTunnelHandler(target: target, proxy: settings.proxy!, then: tlsHandler))
                    case .socks5?:
                        try sync.addHandler(SOCKSClientHandler(targetAddress: .domain(host, port: port)))
                        try sync.addHandler(SOCKSEstablishedHandler(then: tlsHandler))
                    }
                    try sync.addHandler(capture.watcher)
                }
            }
        let connectTo = settings.proxy.map { (host: $0.host, port: $0.port) } ?? target
        let timer = capture.eventLoop.scheduleTask(in: .init(timeout)) {
            capture.fail(Failure(description: "no certificate within \(timeout)"))
        }
        defer { timer.cancel() }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: connectTo.host, port: connectTo.port).get()
        } catch {
            let failure = Failure(description: "cannot connect to \(connectTo.host):\(connectTo.port): \(error)")
            // The promise is the capture's: left pending, NIO traps on it when it is released (debug builds).
            capture.fail(failure)
            throw failure
        }
        defer { channel.close(promise: nil) }
        return try await capture.chain.get().map { try $0.toDERBytes() }
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: 0)) != nil
    }

    /// The chain, or why none came; completed once, on the channel's event loop.
    final class ChainCapture: Sendable {
        let eventLoop: any EventLoop
        let promise: EventLoopPromise<[NIOSSLCertificate]>
        private let done = NIOLockedValueBox(false)

        init(eventLoop: any EventLoop) {
            self.eventLoop = eventLoop
            promise = eventLoop.makePromise()
        }

        var chain: EventLoopFuture<[NIOSSLCertificate]> { promise.futureResult }

        func received(_ chain: [NIOSSLCertificate]) {
            if claim() { promise.succeed(chain) }
        }

        func fail(_ error: any Error) {
            if claim() { promise.fail(error) }
        }

        private func claim() -> Bool {
            done.withLockedValue { done in
                defer { done = true }
                return !done
            }
        }

        var watcher: ErrorWatcher { ErrorWatcher(capture: self) }
    }

    /// Fails the capture when the connection fails or closes before a certificate arrived (a proxy refusing the
    /// tunnel, a server that does not speak TLS).
    final class ErrorWatcher: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let capture: ChainCapture

        init(capture: ChainCapture) { self.capture = capture }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            capture.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            capture.fail(Failure(description: "the connection closed before the server sent a certificate"))
            context.fireChannelInactive()
        }
    }

    /// An HTTP proxy's `CONNECT host:port` (the name unresolved), then TLS through the tunnel.
    final class ConnectTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = ByteBuffer
        let target: (host: String, port: Int)
        let proxy: ProxyServer
        let next: NIOSSLClientHandler
        private var received = ByteBuffer()

        init(target: (host: String, port: Int), proxy: ProxyServer, then next: NIOSSLClientHandler) {
            self.target = target
            self.proxy = proxy
            self.next = next
        }

        func channelActive(context: ChannelHandlerContext) {
            let authority =
                target.host.contains(":") ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"
            var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
            if let user = proxy.username {
                let credentials = Data("\(user):\(proxy.password ?? "")".utf8).base64EncodedString()
                request += "Proxy-Authorization: Basic \(credentials)\r\n"
            }
            request += "\r\n"
            context.writeAndFlush(NIOAny(ByteBuffer(string: request)), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            received.writeBuffer(&bytes)
            let text = String(buffer: received)
            guard let end = text.range(of: "\r\n\r\n") else {
                if received.readableBytes > 16384 {
                    context.fireErrorCaught(Failure(description: "the proxy's answer is too long"))
                }
                return
            }
            let statusLine = text[..<(text.firstIndex(of: "\r") ?? end.lowerBound)]
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[1] == "200" else {
                context.fireErrorCaught(Failure(description: "the proxy refused the tunnel: \(statusLine)"))
                return
            }
            received.moveReaderIndex(forwardBy: text[..<end.upperBound].utf8.count)
            let rest = received
            let pipeline = context.pipeline
            do {
                try pipeline.syncOperations.addHandler(next, position: .after(self))
            } catch {
                context.fireErrorCaught(error)
                return
            }
            pipeline.syncOperations.removeHandler(context: context, promise: nil)
            if rest.readableBytes > 0 { context.fireChannelRead(NIOAny(rest)) }
        }
    }

    /// Adds TLS once the SOCKS proxy has connected to the target.
    final class SOCKSEstablishedHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        let next: NIOSSLClientHandler

        init(then next: NIOSSLClientHandler) { self.next = next }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            guard event is SOCKSProxyEstablishedEvent else { return context.fireUserInboundEventTriggered(event) }
            do {
                try context.pipeline.syncOperations.addHandler(next, position: .after(self))
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            } catch {
                context.fireErrorCaught(error)
            }
        }
    }
}
