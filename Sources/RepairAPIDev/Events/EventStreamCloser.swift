internal import ServiceLifecycle

/// Ends every open change stream when the server shuts down gracefully (SIGTERM, `DevBackend.shutdown()`): a
/// stream is a request that never completes, which a graceful shutdown would otherwise wait for.
struct EventStreamCloser: Service {
    let hub: ChangeEventHub

    func run() async throws {
        try? await gracefulShutdown()
        hub.close()
    }
}
