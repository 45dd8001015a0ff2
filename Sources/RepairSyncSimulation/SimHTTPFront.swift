internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import RepairSyncEngine
internal import Synchronization

/// The simulated server on a loopback port, for the seeds whose crashes are real: an engine in a child process
/// (`repairsync-test-helper`), killed with SIGKILL at a chosen event, wherever SQLite happens to be. Requests are
/// answered by the same `SimServer`, one at a time, without faults.
final class SimHTTPFront: Sendable {
    /// The server, shared with the connection handlers.
    final class Box: Sendable {
        let server: Mutex<SimServer>
        init(_ server: SimServer) { self.server = Mutex(server) }
    }

    private let box: Box
    private let channel: any Channel
    let port: Int

    init(server: SimServer) throws {
        let box = Box(server)
        self.box = box
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(front: box))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    /// Stops listening and returns the server as the child left it.
    func close() -> SimServer {
        try? channel.close().wait()
        return box.server.withLock { $0 }
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let front: Box
        var head: HTTPRequestHead?
        var body = Data()

        init(front: Box) { self.front = front }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = Data()
            case .body(var buffer):
                body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            case .end:
                guard let head else { return }
                let request = TransportRequest(
                    method: head.method.rawValue, path: head.uri, headers: head.headers.map { ($0.name, $0.value) },
                    body: body.isEmpty ? nil : body)
                let response = front.server.withLock { $0.handle(request) }
                var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
                headers.replaceOrAdd(name: "Content-Length", value: "\(response.body.count)")
                context.write(
                    wrapOutboundOut(
                        .head(
                            HTTPResponseHead(
                                version: head.version, status: .init(statusCode: response.status), headers: headers))),
                    promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                self.head = nil
            }
        }
    }
}
