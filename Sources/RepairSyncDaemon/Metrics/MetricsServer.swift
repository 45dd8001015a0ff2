internal import Hummingbird
internal import HummingbirdCore
internal import Logging
internal import NIOCore
internal import ServiceLifecycle

/// `GET /metrics` on a loopback address (`metrics.listen`), in the Prometheus text format.
struct MetricsServer {
    let host: String
    let port: Int
    let metrics: SyncMetrics
    let logger: Logger
    let onListening: @Sendable (Int) -> Void

    /// Connections served at once; more wait in the listen queue.
    static let maxConnections = 16
    static let idleTimeout = TimeAmount.seconds(10)

    func service() -> any Service {
        let router = Router()
        let metrics = metrics
        router.get("metrics") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: metrics.exposition)))
        }
        var quiet = logger
        quiet.logLevel = .warning
        let onListening = onListening
        // A scraper asks every few seconds: a handful of connections, each closed once idle. Without both, any
        // local user holding idle connections took every file descriptor the daemon had — its control socket, the
        // store and the API went with them.
        return Application(
            router: router, server: .http1(configuration: .init(idleTimeout: Self.idleTimeout)),
            configuration: .init(
                address: .hostname(host, port: port), serverName: "repairsyncd",
                availableConnectionsDelegate: MaximumAvailableConnections(Self.maxConnections, logger: quiet)),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) }, logger: quiet)
    }
}
