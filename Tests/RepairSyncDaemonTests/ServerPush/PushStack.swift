import AsyncHTTPClient
import BackendTestSupport
import Foundation
import GRDB
import Logging
import NIOHTTP1
import RepairAPIDev
import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncModels
import RepairSyncProtocol
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// The scheduler, the engine and the change-stream client as the daemon wires them (`sync.events` on), over a real
/// store and a real `repair-api-dev` on loopback; the periodic interval is hours, so only the stream can bring a
/// server edit in.
struct PushStack: Sendable {
    let backend: RunningBackend
    let engine: SyncEngine
    let scheduler: SchedulerService
    let directory: TemporaryDirectory

    var events: EventStreamClient { scheduler.events! }

    /// Runs `body` with the stack running; `prepare` configures the backend first (e.g. the stream off).
    static func with(
        orders: Int = 30, interval: Duration = .seconds(4 * 3600),
        settings: EventStreamClient.Settings = PushStack.fastSettings,
        prepare: @Sendable (RunningBackend) async throws -> Void = { _ in },
        _ body: @Sendable (PushStack) async throws -> Void
    ) async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: orders)) { backend in
            try await prepare(backend)
            let directory = try TemporaryDirectory(prefix: "server-push")
            let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
            let api = APIClient(configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token))
            let engine = try SyncEngine(store: store, api: api, logger: Logger(label: "test.engine"))
            // The probe as configured (polling: netlink is not needed on loopback).
            try """
            api:
              base_url: \(backend.baseURL)
              token_file: \(directory.path("token"))
            probe:
              mode: poll
              online_interval: 1h
            """.write(toFile: directory.path("config.yaml"), atomically: true, encoding: .utf8)
            try RunningBackend.token.write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.path("token"))
            let configuration = try await ConfigurationLoader.load(
                path: directory.path("config.yaml"), environment: [:])
            let scheduler = SchedulerService(
                engine: engine, policy: SchedulePolicy(interval: interval, jitter: 0),
                probeSettings: configuration.probe,
                probeAPI: APIClient(configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token)),
                shutdownGrace: .seconds(1),
                events: .init(
                    http: HTTPClient.shared, baseURL: backend.baseURL, token: RunningBackend.token, settings: settings),
                logger: Logger(label: "test.scheduler"))
            let stack = PushStack(backend: backend, engine: engine, scheduler: scheduler, directory: directory)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await scheduler.run() }
                defer { group.cancelAll() }
                try await body(stack)
            }
        }
    }

    /// Short waits, so the tests take seconds; the shapes are the production ones.
    static let fastSettings = EventStreamClient.Settings(
        backoff: EventStreamBackoff(base: .milliseconds(100), cap: .milliseconds(800), healthyAfter: .seconds(30)),
        recheckUnavailable: .seconds(3600))

    // MARK: Waiting

    /// Waits until `condition` holds, checking it every 20 ms, at most `timeout`; fails the test with `what` when
    /// it never does. Returns how long it took.
    @discardableResult
    static func waitUntil(
        _ what: String, timeout: Duration = .seconds(60), _ condition: @Sendable () async throws -> Bool
    ) async throws -> Duration {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < timeout {
            if try await condition() { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out after \(timeout): \(what)")
        throw TimedOut(what: what)
    }

    struct TimedOut: Error { var what: String }

    /// The stream is open and the start-up runs (the startup run and the pull a fresh stream asks for) are over:
    /// nothing but the periodic run is planned.
    func settled() async throws {
        try await Self.waitUntil("the stream connected and the start-up runs done", timeout: .seconds(90)) {
            let status = await engine.status
            return events.snapshot.state == .connected && events.snapshot.lastEventID != nil
                && status.lastSuccessAt != nil
                && scheduler.snapshot.nextRunReason == "periodic" && status.phase.name != "syncing"
        }
    }

    // MARK: Reading both ends

    /// The order's notes in the replica.
    func replicaNotes(_ id: String) throws -> String? {
        try engine.store.read { db in
            try String.fetchOne(db, sql: "SELECT notes FROM orders WHERE id = ?", arguments: [id])
        }
    }

    /// An edit made on the server by another user (the admin surface: a committed write like any PATCH).
    func serverEdit(_ id: String, notes: String) async throws {
        let reply = try await backend.send(
            .PATCH, "/admin/records/orders/\(id)", json: "{\"notes\": \"\(notes)\"}")
        #expect(reply.status == 200, "admin edit: \(reply.text)")
    }

    func streamAdmin(_ json: String) async throws {
        let reply = try await backend.send(.PUT, "/admin/events", json: json)
        #expect(reply.status == 200, "admin events: \(reply.text)")
    }

    func serverEvents() async throws -> [String: Any] { try await backend.get("/admin/events").object() }

    /// Changes pages served for `collection` so far.
    func pagesServed(_ collection: String) async throws -> Int {
        let counters = try await backend.get("/admin/counters").object()
        return (counters["pages_served"] as? [String: Any])?[collection] as? Int ?? 0
    }

    func status() async -> StatusSnapshot {
        StatusSnapshot(await engine.status, scheduler: scheduler, storeBytes: engine.storeBytes)
    }
}
