internal import CSystemd
internal import Logging
internal import RepairSyncControlServer
internal import ServiceLifecycle

/// The control socket as a service: listens until graceful shutdown (the first service to stop, so no request
/// arrives while the engine winds down), and tells systemd the daemon is ready once the socket accepts connections.
/// Its audit trail's summaries are written beside it, the last ones when it stops.
struct ControlService: Service {
    let server: ControlServer
    let audit: ControlAudit
    let logger: Logger
    let onReady: @Sendable () -> Void

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await audit.run() }
            defer { group.cancelAll() }
            try await cancelWhenGracefulShutdown {
                try await server.run {
                    logger.info("control socket listening", metadata: ["socket": "\(server.path)"])
                    onReady()
                }
            }
        }
    }
}
