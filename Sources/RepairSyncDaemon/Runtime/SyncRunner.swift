public import Logging
public import RepairSyncEngine
public import RepairSyncModels
public import ServiceLifecycle
internal import Synchronization

/// Starts sync runs: a full sync at start-up and every `interval` (measured from the end of the last run), and
/// the runs asked for over the socket without waiting. While paused only requested runs happen.
///
/// (Issue 6 replaces the fixed interval with the full scheduler: jitter, per-collection ages, backoff, the
/// connectivity probe.)
public final class SyncRunner: Service, Sendable {
    public enum Request: Sendable {
        case full
        case collections(Set<SyncCollection>)
    }

    let engine: SyncEngine
    let logger: Logger
    let shutdownGrace: Duration
    private let intervalValue: Mutex<Duration>
    private let requests: AsyncStream<Request>
    private let requestContinuation: AsyncStream<Request>.Continuation
    private let paused = Mutex(false)

    public init(engine: SyncEngine, interval: Duration, shutdownGrace: Duration, logger: Logger) {
        self.engine = engine
        self.intervalValue = Mutex(interval)
        self.shutdownGrace = shutdownGrace
        self.logger = logger
        (requests, requestContinuation) = AsyncStream.makeStream(of: Request.self, bufferingPolicy: .bufferingNewest(16))
    }

    /// The time between periodic runs (a reload may change it; it applies from the next wait).
    public var interval: Duration {
        get { intervalValue.withLock { $0 } }
        set { intervalValue.withLock { $0 = newValue } }
    }

    public var isPaused: Bool { paused.withLock { $0 } }

    public func setPaused(_ paused: Bool) {
        self.paused.withLock { $0 = paused }
        logger.info("automatic sync \(paused ? "paused" : "resumed")")
    }

    /// Asks for a run without waiting for it (the engine coalesces it with one in progress).
    public func trigger(_ request: Request) { requestContinuation.yield(request) }

    /// After a local change: push soon, unless automatic sync is paused (then the change waits for a manual run).
    public func pushSoon() {
        if !isPaused { trigger(.collections([])) }
    }

    public func run() async throws {
        // Periodic runs are timer ticks merged with requests: whichever comes first starts the next run.
        await withDiscardingTaskGroup { group in
            let (ticks, tickContinuation) = AsyncStream.makeStream(of: Request.self, bufferingPolicy: .bufferingNewest(1))
            group.addTask {
                for await request in self.requests { tickContinuation.yield(request) }
            }
            group.addTask {
                tickContinuation.yield(.full)  // start-up
                while !Task.isCancelled {
                    do {
                        try await Task.sleep(for: self.interval)
                    } catch {
                        return
                    }
                    if !self.isPaused { tickContinuation.yield(.full) }
                }
            }
            group.addTask {
                for await request in ticks.cancelOnGracefulShutdown() {
                    switch request {
                    case .full: await self.engine.performFullSync()
                    case .collections(let collections): await self.engine.sync(collections)
                    }
                }
            }
            try? await gracefulShutdown()
            // Shutdown: no new runs; the run in progress ends at its next request boundary, waiting at most the
            // grace period for the request in flight (its outcome is committed or replayed after a restart).
            tickContinuation.finish()
            requestContinuation.finish()
            engine.requestStop()
            let engine = engine
            let grace = shutdownGrace
            await withTaskGroup(of: Void.self) { race in
                race.addTask { await engine.stop() }
                race.addTask { try? await Task.sleep(for: grace) }
                await race.next()
                race.cancelAll()
            }
            group.cancelAll()
        }
    }
}
