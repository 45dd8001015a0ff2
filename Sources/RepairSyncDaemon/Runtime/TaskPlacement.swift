internal import NIOCore
internal import NIOPosix
internal import Synchronization

/// Where the daemon's tasks run: on NIO's event loops (the threads that serve its sockets), not on Swift's default
/// pool beside them.
///
/// A control call arrives on an event loop and its reply leaves from one. With Swift's own pool in between, every
/// call crossed threads twice more than it needed — into the pool to be served, and back to the loop to be
/// written — and on the shop's two cores each crossing is a wake-up. With the loops as the global executor, a task
/// resumed on a loop stays on it (NIO's `any()` is sticky), and writing from a loop is a plain write. Measured with
/// `repairsync-bench --only queue-change` (docs/performance.md): 20 clients 6,156–7,229 → 8,590–8,983 changes/s,
/// context switches per call from one client 8.8 → 6.5.
///
/// The price: a task that blocks its thread holds up that loop's sockets too (with the default pool it held up a
/// pool thread, of which there are as few). Nothing in the daemon blocks for long on a task: the database is reached
/// through GRDB's own queues (a replica read holds its caller for the read, well under a millisecond on indexes), and
/// what takes seconds — a backup, `quick_check` — runs on NIO's blocking pool (`BlockingWork`).
public enum TaskPlacement {
    private static let installed = Atomic(false)

    /// Makes the event loops Swift's global executor. Once per process, from the daemon's entry point, before it
    /// starts its work (never from a library or a test: the hook is process-wide). Returns whether it took.
    @discardableResult
    public static func runTasksOnEventLoops() -> Bool {
        let done = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        installed.store(done, ordering: .relaxed)
        return done
    }

    /// Whether tasks run on the event loops (for the start-up log).
    static var onEventLoops: Bool { installed.load(ordering: .relaxed) }
}
