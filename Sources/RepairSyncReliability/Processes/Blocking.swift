internal import Foundation

/// Runs blocking work (socket reads, waitpid) on its own thread, so it never holds a cooperative-pool thread.
enum Blocking {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
