import BackendTestSupport
import Foundation
import Logging
import RepairAPIDev
import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// Local changes reach the scheduler as one event per burst (concurrent callers share the one waiting in its
/// mailbox): no change may be left without a push planned for it.
@Suite("Scheduler: local changes", .timeLimit(.minutes(2)))
struct SchedulerLocalChangeTests {
    @Test("bursts of changes from 20 concurrent callers, one after another: each burst is pushed soon, none waits for the periodic run")
    func burstsArePushed() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 30)) { backend in
            let directory = try TemporaryDirectory(prefix: "local-change")
            try RunningBackend.token.write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.path("token"))
            // The periodic run is an hour away: only the local-change trigger can push within the test's limit.
            try """
                api:
                  base_url: \(backend.baseURL)
                  token_file: \(directory.path("token"))
                sync:
                  interval: 1h
                  push_debounce: 20ms
                probe:
                  mode: poll
                """.write(toFile: directory.path("config.yaml"), atomically: true, encoding: .utf8)
            let configuration = try await ConfigurationLoader.load(path: directory.path("config.yaml"), environment: [:])
            let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
            let api = APIClient(configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token))
            let engine = try SyncEngine(store: store, api: api, configuration: configuration.engineConfiguration)
            let scheduler = SchedulerService(
                engine: engine, policy: configuration.schedulePolicy, probeSettings: configuration.probe,
                probeAPI: APIClient(configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token)),
                shutdownGrace: .seconds(1), logger: Logger(label: "test.scheduler"))

            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await scheduler.run() }
                let updates = await engine.statusUpdates()
                func wait(_ what: String, _ condition: @escaping @Sendable (EngineStatus) -> Bool) async throws {
                    let reached = try await withThrowingTaskGroup(of: Bool.self) { race in
                        race.addTask { for await status in updates where condition(status) { return true }; return false }
                        race.addTask { try await Task.sleep(for: .seconds(60)); return false }
                        let first = try await race.next() ?? false
                        race.cancelAll()
                        return first
                    }
                    let status = await engine.status
                    #expect(reached, "\(what) within 60 s; status: \(status)")
                }
                try await wait("the first sync") { $0.lastSuccessAt != nil && $0.pending == 0 }

                for burst in 1...3 {
                    // (The status stream may still hold statuses from before the burst: a run after it tells.)
                    let runsBefore = await engine.status.metrics.runs
                    // 20 callers at once, as shop tools write rows and call queueChange (here: an edit, then the
                    // notice), each with its own order.
                    try await withThrowingTaskGroup(of: Void.self) { callers in
                        for caller in 1...20 {
                            callers.addTask {
                                try await engine.update(.orders, id: "ord_\(caller)", fields: ["notes": "burst \(burst)"])
                                await scheduler.localChange()
                            }
                        }
                        try await callers.waitForAll()
                    }
                    #expect(await engine.status.pending == 20)
                    try await wait("burst \(burst) pushed") {
                        $0.metrics.runs > runsBefore && $0.pending == 0 && $0.failed == 0
                    }
                    let server = try await backend.get("/api/v1/orders/ord_20")
                    #expect(server.text.contains("burst \(burst)"), "burst \(burst): \(server.text.prefix(300))")
                }
                group.cancelAll()
            }
        }
    }
}
