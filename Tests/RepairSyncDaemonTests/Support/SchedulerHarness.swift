import BackendTestSupport
import Foundation
import Logging
import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// The scheduler and the engine as the daemon wires them, over a real backend and store, in process: for tests that
/// drive the scheduler's triggers and watch what the engine does.
struct SchedulerHarness {
    let engine: SyncEngine
    let scheduler: SchedulerService
    private let updates: AsyncStream<EngineStatus>

    /// Runs `body` with the scheduler running, configured by `settings` (YAML lines after `api:`, e.g. a `sync:`
    /// section), the engine reading `clock`.
    static func with(
        _ backend: RunningBackend, settings: String, clock: any EngineClock = SystemEngineClock(),
        releaseMemoryAfter: Duration? = nil, onIdleMemoryReleased: (@Sendable (IdleMemory.Report) -> Void)? = nil,
        _ body: (SchedulerHarness) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "scheduler")
        try RunningBackend.token.write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.path("token"))
        try """
        api:
          base_url: \(backend.baseURL)
          token_file: \(directory.path("token"))
        \(settings)
        """.write(toFile: directory.path("config.yaml"), atomically: true, encoding: .utf8)
        let configuration = try await ConfigurationLoader.load(path: directory.path("config.yaml"), environment: [:])
        let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
        let api = APIClient(configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token), clock: clock)
        let engine = try SyncEngine(
            store: store, api: api, configuration: configuration.engineConfiguration, clock: clock)
        // Idle memory is handed back only in the tests that ask for it (nil: never, the others' default).
        var policy = configuration.schedulePolicy
        policy.releaseMemoryAfter = releaseMemoryAfter
        let scheduler = SchedulerService(
            engine: engine, policy: policy, probeSettings: configuration.probe,
            probeAPI: APIClient(
                configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token), clock: clock),
            shutdownGrace: .seconds(1), logger: Logger(label: "test.scheduler"),
            onIdleMemoryReleased: onIdleMemoryReleased)
        let harness = SchedulerHarness(engine: engine, scheduler: scheduler, updates: await engine.statusUpdates())
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await scheduler.run() }
            try await body(harness)
            group.cancelAll()
        }
    }

    /// The first status that meets `condition`, within 60 s (a test failure, and nil, when none does). The stream
    /// may still hold statuses from before the caller's last step: a condition must tell them apart.
    @discardableResult
    /// `fresh`: only the current status and those after it, from a stream subscribed now — not statuses the
    /// test's stream still holds from before (a run that started before a burst and ends after it would pass for
    /// the burst's).
    func wait(
        _ what: String, fresh: Bool = false, _ condition: @escaping @Sendable (EngineStatus) -> Bool
    ) async throws -> EngineStatus? {
        let updates = fresh ? await engine.statusUpdates() : updates
        let reached = try await withThrowingTaskGroup(of: EngineStatus?.self) { race in
            race.addTask {
                for await status in updates where condition(status) { return status }
                return nil
            }
            race.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await race.next() ?? nil
            race.cancelAll()
            return first
        }
        if reached == nil {
            let status = await engine.status
            Issue.record("\(what): not within 60 s; status: \(status)")
        }
        return reached
    }
}
