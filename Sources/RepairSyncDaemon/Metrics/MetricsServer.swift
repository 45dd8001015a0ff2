internal import Hummingbird
internal import Logging
internal import ServiceLifecycle

/// `GET /metrics` on a loopback address (`metrics.listen`), in the Prometheus text format.
struct MetricsServer {
    let host: String
    let port: Int
    let metrics: SyncMetrics
    let logger: Logger
    let onListening: @Sendable (Int) -> Void

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
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "repairsyncd"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) }, logger: quiet)
    }
}
