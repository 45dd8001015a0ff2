internal import CSystemd
internal import Logging
internal import RepairSyncControlServer
internal import ServiceLifecycle

/// The control socket as a service: listens until graceful shutdown (the first service to stop, so no request
/// arrives while the engine winds down), and tells systemd the daemon is ready once the socket accepts connections.
struct ControlService: Service {
    let server: ControlServer
    let logger: Logger
    let onReady: @Sendable () -> Void

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await server.run {
                logger.info("control socket listening", metadata: ["socket": "\(server.path)"])
                onReady()
            }
        }
    }
}
