internal import NIOPosix

/// Work that holds its thread for long — a store's backup, an integrity check — runs on NIO's pool of threads for
/// blocking work, so the threads that serve tasks and sockets (`TaskPlacement`) go on serving them meanwhile.
enum BlockingWork {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}
