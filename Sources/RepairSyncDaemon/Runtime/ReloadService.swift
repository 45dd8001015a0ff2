internal import Logging
internal import ServiceLifecycle
internal import UnixSignals

/// SIGHUP → reload the configuration (the same as the `reload` method).
struct ReloadService: Service {
    let reload: @Sendable () async -> Void

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            await reload()
        }
    }
}
