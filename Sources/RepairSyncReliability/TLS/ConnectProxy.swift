internal import Foundation
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix

/// A small HTTP proxy on loopback that tunnels with `CONNECT`, as a shop's proxy does, for tests: it records every
/// request line it receives, resolves target names only through its own table (`hosts` — a name the machine cannot
/// resolve works only through it), and can demand Basic credentials (407 without them).
///
/// ```swift
/// let proxy = try await ConnectProxy.start(hosts: ["api.repair.test": "127.0.0.1"])
/// // api.proxy: http://127.0.0.1:\(proxy.port) …
/// proxy.requestLines  // ["CONNECT api.repair.test:8443 HTTP/1.1"]
/// try await proxy.stop()
/// ```
public final class ConnectProxy: Sendable {
    public let port: Int
    private let channel: any Channel
    private let state: NIOLockedValueBox<State>

    struct State {
        var requestLines: [String] = []
        var authorizations: [String?] = []
        var tunnels = 0
    }

    /// Every request line received, in order (`CONNECT host:port HTTP/1.1`).
    public var requestLines: [String] { state.withLockedValue { $0.requestLines } }
    /// The `Proxy-Authorization` header of each request (nil: none).
    public var authorizations: [String?] { state.withLockedValue { $0.authorizations } }
    /// Tunnels opened to a target.
    public var tunnels: Int { state.withLockedValue { $0.tunnels } }

    private init(port: Int, channel: any Channel, state: NIOLockedValueBox<State>) {
        self.port = port
        self.channel = channel
        self.state = state
    }

    /// Listens on 127.0.0.1 (a free port). `hosts` maps the names it will tunnel to addresses (IP literals are used as
    /// they are); `credentials` (`user:password`), when set, is required.
    public static func start(hosts: [String: String] = [:], credentials: String? = nil) async throws -> ConnectProxy {
        let state = NIOLockedValueBox(State())
        let required = credentials.map { "Basic " + Data($0.utf8).base64EncodedString() }
        let group = MultiThreadedEventLoopGroup.singleton
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(
                        RequestHandler(hosts: hosts, required: required, state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ConnectProxy(port: channel.localAddress?.port ?? 0, channel: channel, state: state)
    }

    public func stop() async throws {
        try await channel.close().get()
    }

    /// Reads the request head, answers it, and on success splices the client to the target.
    final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let hosts: [String: String]
        let required: String?
        let state: NIOLockedValueBox<State>
        private var head = ByteBuffer()

        init(hosts: [String: String], required: String?, state: NIOLockedValueBox<State>) {
            self.hosts = hosts
            self.required = required
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            head.writeBuffer(&bytes)
            let text = String(buffer: head)
            guard let end = text.range(of: "\r\n\r\n") else {
                if head.readableBytes > 16384 { context.close(promise: nil) }
                return
            }
            let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
            let requestLine = lines[0]
            let authorization = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
                .map { String($0.dropFirst("proxy-authorization:".count)).trimmingCharacters(in: .whitespaces) }
            state.withLockedValue {
                $0.requestLines.append(requestLine)
                $0.authorizations.append(authorization)
            }
            let parts = requestLine.split(separator: " ")
            guard parts.count == 3, parts[0] == "CONNECT", let colon = parts[1].lastIndex(of: ":"),
                let port = Int(parts[1][parts[1].index(after: colon)...])
            else { return answer(context, "405 Method Not Allowed") }
            if let required, authorization != required {
                return answer(
                    context, "407 Proxy Authentication Required", extra: "Proxy-Authenticate: Basic realm=\"test\"\r\n")
            }
            let name = String(parts[1][..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            let isIP = (try? SocketAddress(ipAddress: name, port: 0)) != nil
            guard let address = hosts[name] ?? (isIP ? name : nil) else { return answer(context, "502 Bad Gateway") }
            head.moveReaderIndex(forwardBy: text[..<end.upperBound].utf8.count)
            let early = head
            let client = context.channel
            let pipeline = context.pipeline
            let handler = self
            let state = self.state
            ClientBootstrap(group: context.eventLoop)
                .connect(host: address, port: port)
                .hop(to: context.eventLoop)
                .assumeIsolated()
                .whenComplete { result in
                    switch result {
                    case .failure:
                        client.writeAndFlush(
                            ByteBuffer(string: "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                        )
                        .whenComplete { _ in client.close(promise: nil) }
                    case .success(let target):
                        state.withLockedValue { $0.tunnels += 1 }
                        do {
                            try target.pipeline.syncOperations.addHandler(Splice(partner: client))
                            try pipeline.syncOperations.addHandler(Splice(partner: target))
                            pipeline.syncOperations.removeHandler(handler, promise: nil)
                        } catch {
                            client.close(promise: nil)
                            target.close(promise: nil)
                            return
                        }
                        client.writeAndFlush(
                            ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\n"), promise: nil)
                        if early.readableBytes > 0 { target.writeAndFlush(early, promise: nil) }
                    }
                }
        }

        private func answer(_ context: ChannelHandlerContext, _ status: String, extra: String = "") {
            let response = "HTTP/1.1 \(status)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n"
            let channel = context.channel
            context.writeAndFlush(NIOAny(ByteBuffer(string: response))).whenComplete { _ in channel.close(promise: nil)
            }
        }
    }

    /// Forwards bytes to the partner channel; closing either side closes both.
    final class Splice: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let partner: any Channel

        init(partner: any Channel) { self.partner = partner }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
