internal import CSystemd
internal import Logging
internal import RepairSyncControlServer
internal import ServiceLifecycle

/// The control socket as a service: listens until graceful shutdown (the first service to stop, so no request
/// arrives while the engine winds down), and tells systemd the daemon is ready once the socket accepts connections.
/// Its audit trails' summaries (changes, refusals) are written beside it, the last ones when it stops.
struct ControlService: Service {
    let server: ControlServer
    let audits: [ControlAudit]
    let logger: Logger
    let onReady: @Sendable () -> Void

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for audit in audits { group.addTask { await audit.run() } }
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
