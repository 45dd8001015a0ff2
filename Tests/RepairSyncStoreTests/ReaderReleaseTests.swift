import Dispatch
import Foundation
import GRDB
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// A long run once deadlocked the daemon: every thread of Swift's cooperative pool (two on a two-core counter PC)
/// was blocked in a synchronous read of the store — an actor's status count, a control request — waiting for a
/// connection, and every connection was held by an async read whose body was done but whose task needed one of those
/// threads to give the connection back.
@Suite struct ReaderReleaseTests {
    /// The pool's connections (GRDB's default `maximumReaderCount`).
    static let connections = 5

    @Test(
        "an async read gives its connection back when its body is done, before its caller's task runs again",
        .timeLimit(.minutes(1)))
    func asyncReadReleasesBeforeResuming() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))

        // All connections but one are held by synchronous reads parked in their bodies.
        let entered = DispatchSemaphore(value: 0)
        let parked = DispatchSemaphore(value: 0)
        for _ in 1..<Self.connections {
            Thread.detachNewThread {
                _ = try? store.read { _ in
                    entered.signal()
                    parked.wait()
                }
            }
        }
        for _ in 1..<Self.connections { entered.wait() }
        defer { for _ in 1..<Self.connections { parked.signal() } }

        // The last one: an async read whose task cannot run again once its body is done (its executor holds every
        // job from then on, as a cooperative pool with all its threads blocked would).
        let executor = HoldingExecutor()
        let bodyDone = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            _ = try? await store.read { _ in
                executor.hold()
                bodyDone.signal()
            }
            finished.signal()
        }
        bodyDone.wait()
        defer {
            executor.release()
            finished.wait()
        }

        // A synchronous read needs a connection: it gets the async read's, without that task running again.
        let read = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? store.read { _ in }
            read.signal()
        }
        #expect(
            read.wait(timeout: .now() + 10) == .success,
            "the async read kept its connection until its task ran again")
    }
}

/// A task executor that runs jobs on its own queue until told to hold them, then keeps them until released.
private final class HoldingExecutor: TaskExecutor, @unchecked Sendable {
    private let lock = NSLock()
    private var holding = false
    private var held: [UnownedJob] = []
    private let queue = DispatchQueue(label: "holding-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let run = lock.withLock {
            if holding { held.append(job) }
            return !holding
        }
        if run { schedule(job) }
    }

    func hold() { lock.withLock { holding = true } }

    func release() {
        let jobs = lock.withLock {
            holding = false
            defer { held = [] }
            return held
        }
        jobs.forEach(schedule)
    }

    private func schedule(_ job: UnownedJob) {
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
