import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairAPIDev
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Synchronization

/// A real `repair-api-dev` on loopback, a real SQLite store in a temporary directory, and an engine between them.
struct EngineHarness: Sendable {
    let backend: RunningBackend
    let directory: TemporaryDirectory
    let store: ReplicaStore
    let engine: SyncEngine
    let recorder: EventRecorder

    /// Small pages, so a 30-order shop needs several per collection; fast retries; `completed` lasts a moment.
    static func configuration(
        policies: [SyncCollection: ConflictPolicy] = [:], maxAttempts: Int = 10
    ) -> EngineConfiguration {
        EngineConfiguration(
            pageSize: 40, policies: policies,
            retry: RetryPolicy(base: .milliseconds(1), cap: .milliseconds(5), maxAttempts: maxAttempts),
            completedHold: .milliseconds(50))
    }

    /// Retries an hour apart (at the top of their jitter): a change that failed or went in doubt waits while the
    /// test pulls, edits or changes the server, and goes again only from an engine whose clock is set later.
    static let hourlyRetries = EngineConfiguration(
        pageSize: 40, retry: RetryPolicy(base: .seconds(3600), cap: .seconds(3600), maxAttempts: 10),
        completedHold: .milliseconds(50), random: { 1 })

    /// Over `scheme`: with HTTPS the engine trusts the backend's throwaway CA the way the daemon does with
    /// `api.ca_file` (the system's CAs plus that one).
    static func with<T: Sendable>(
        orders: Int = 30, configuration: EngineConfiguration = EngineHarness.configuration(),
        clock: SystemEngineClock = SystemEngineClock(), token: String = RunningBackend.token,
        scheme: RunningBackend.Scheme = .http,
        _ body: @Sendable (EngineHarness) async throws -> T
    ) async throws -> T {
        try await RunningBackend.with(seed: SeedOptions(orders: orders), scheme: scheme) { backend in
            let directory = try TemporaryDirectory(prefix: "engine-test")
            let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
            let recorder = EventRecorder()
            let api = APIClient(
                configuration: .init(baseURL: backend.baseURL, token: token), clock: clock,
                transport: HTTPTransport(
                    baseURL: backend.baseURL, http: backend.client, settings: TransportSettings(caFile: backend.caFile))
            )
            let engine = try SyncEngine(
                store: store, api: api, configuration: configuration, clock: clock,
                events: EngineEvents { recorder.record($0) })
            return try await body(
                EngineHarness(backend: backend, directory: directory, store: store, engine: engine, recorder: recorder))
        }
    }

    /// A second engine on the same store (or on the same file opened again as `store`), as after a restart of the
    /// daemon — on a clock set ahead, for one restarted when a retry's time has come.
    func reopenedEngine(
        on store: ReplicaStore? = nil, configuration: EngineConfiguration = EngineHarness.configuration(),
        clock: SystemEngineClock = SystemEngineClock()
    ) throws -> SyncEngine {
        let api = APIClient(
            configuration: .init(baseURL: backend.baseURL, token: RunningBackend.token), clock: clock,
            transport: HTTPTransport(
                baseURL: backend.baseURL, http: backend.client, settings: TransportSettings(caFile: backend.caFile)))
        return try SyncEngine(store: store ?? self.store, api: api, configuration: configuration, clock: clock)
    }

    // MARK: The server side

    func serverRecord<R: Decodable>(_ type: R.Type, _ collection: String, _ id: String) async throws -> R {
        let response = try await backend.get("/api/v1/\(collection)/\(id)")
        guard response.status == 200 else { throw UnexpectedResponse(response: response) }
        return try JSONDecoder().decode(R.self, from: response.body)
    }

    /// Edits a record as another user of the backend would.
    @discardableResult
    func serverEdit(_ collection: String, _ id: String, _ json: String) async throws -> APIResponse {
        let response = try await backend.send(.PATCH, "/admin/records/\(collection)/\(id)", json: json)
        guard response.status == 200 else { throw UnexpectedResponse(response: response) }
        return response
    }

    /// Puts a record back as a restore from a backup would (docs/api.md 7.1): the server takes `record` whole, its
    /// version included, and announces it in its feed unless `inFeed` is false.
    func serverRestore(_ collection: String, _ record: [String: Any], inFeed: Bool = true) async throws {
        let id = record["id"] as? String ?? ""
        let body = String(decoding: try JSONSerialization.data(withJSONObject: record), as: UTF8.self)
        let response = try await backend.send(
            .PUT, "/admin/records/\(collection)/\(id)\(inFeed ? "" : "?in_feed=false")", json: body)
        guard response.status == 200 else { throw UnexpectedResponse(response: response) }
    }

    func serverDelete(_ collection: String, _ id: String) async throws {
        let response = try await backend.send(.DELETE, "/admin/records/\(collection)/\(id)")
        guard response.status == 200 else { throw UnexpectedResponse(response: response) }
    }

    /// Queues a one-shot fault for the next request that matches.
    func fault(_ kind: String, method: String? = nil, path: String? = nil, count: Int = 1) async throws {
        var object: [String: Any] = ["kind": kind, "count": count]
        if let method { object["method"] = method }
        if let path { object["path_prefix"] = path }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let response = try await backend.send(.POST, "/admin/faults/next", json: json)
        guard response.status == 200 else { throw UnexpectedResponse(response: response) }
    }

    func faultPlan(_ json: String) async throws {
        let response = try await backend.send(.PUT, "/admin/faults", json: json)
        guard response.status == 200 else { throw UnexpectedResponse(response: response) }
    }

    func counters() async throws -> [String: Any] {
        try await backend.get("/admin/counters").object()
    }

    func counter(_ name: String) async throws -> Int {
        try await counters()[name] as? Int ?? -1
    }

    /// How many records of each collection the server holds.
    func serverCounts() async throws -> [String: Int] {
        try await counters()["records"] as? [String: Int] ?? [:]
    }

    // MARK: The local side

    func localCount(_ table: String) throws -> Int {
        try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? -1 }
    }

    /// An integer the query selects (a count), read with the synchronous API.
    func integer(_ sql: String) throws -> Int {
        try store.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    /// The first row the query selects, as text columns.
    func strings(_ sql: String) throws -> [String] {
        try store.read { db in
            guard let row = try Row.fetchOne(db, sql: sql) else { return [] }
            return row.columnNames.map { row[$0] as String? ?? "" }
        }
    }

    func local<R: FetchableRecord & TableRecord & Sendable>(_ type: R.Type, _ id: String) throws -> R? {
        try store.read { db in try R.fetchOne(db, key: id) }
    }

    func cursor(_ collection: SyncCollection) throws -> String? {
        try store.read { db in
            try String.fetchOne(
                db, sql: "SELECT cursor FROM sync_metadata WHERE collection = ?", arguments: [collection.name])
        }
    }

    /// Writes columns of a row directly, as another program on the workstation would.
    func writeRow(_ table: String, _ id: String, _ values: [String: String?]) throws {
        try store.write { db in
            let names = values.keys.sorted()
            try db.execute(
                sql: "UPDATE \(table) SET \(names.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?",
                arguments: StatementArguments(names.map { values[$0]! } + [id]))
        }
    }
}

struct UnexpectedResponse: Error, CustomStringConvertible {
    let response: APIResponse
    var description: String { "unexpected HTTP \(response.status): \(response.text.prefix(300))" }
}

/// Collects engine events in order, and lets a test act when one arrives.
final class EventRecorder: Sendable {
    private let state = Mutex<(events: [EngineEvent], hooks: [@Sendable (EngineEvent) -> Void])>(([], []))

    func record(_ event: EngineEvent) {
        let hooks = state.withLock { state in
            state.events.append(event)
            return state.hooks
        }
        for hook in hooks { hook(event) }
    }

    /// Runs `hook` synchronously on the engine's task for every later event (so it acts before the engine goes on).
    func onEvent(_ hook: @escaping @Sendable (EngineEvent) -> Void) {
        state.withLock { $0.hooks.append(hook) }
    }

    /// Runs `action` on the engine's task at the first event that `matches`, once; the result says whether it ran.
    @discardableResult
    func once(when matches: @escaping @Sendable (EngineEvent) -> Bool, _ action: @escaping @Sendable () -> Void) -> Once
    {
        let once = Once()
        onEvent { event in
            guard matches(event), once.claim() else { return }
            action()
        }
        return once
    }

    final class Once: Sendable {
        private let done = Mutex(false)

        var fired: Bool { done.withLock { $0 } }

        /// True the first time only.
        func claim() -> Bool {
            done.withLock { done in
                defer { done = true }
                return !done
            }
        }
    }

    var events: [EngineEvent] { state.withLock { $0.events } }

    var pagesApplied: [SyncCollection: Int] {
        events.reduce(into: [:]) { counts, event in
            if case .pageApplied(let collection, _, _, _) = event { counts[collection, default: 0] += 1 }
        }
    }
}
