import Foundation
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// `repair-api-dev` and `repairsyncd` as separate processes in a fresh workspace, for the hostile-server tests: the
/// server's faults are set before the daemon starts (so its start-up run meets them too), and both are killed when
/// the test ends, however it ends.
struct HostileStack: Sendable {
    let workspace: Workspace
    let server: APIServerProcess
    let daemon: DaemonProcess

    var admin: AdminAPI { server.admin }
    var store: String { daemon.storePath }

    /// `config`: whole YAML sections (conflicts, retry, api…) besides the ones every test has. `before` runs once the
    /// server is up and before the daemon starts.
    static func with(
        _ name: String, orders: Int = 20, config: String = "", startDaemon: Bool = true,
        before: @Sendable (HostileStack) async throws -> Void = { _ in },
        _ body: @Sendable (HostileStack) async throws -> Void
    ) async throws {
        let workspace = try Workspace(name)
        defer { workspace.remove() }
        let server = try await APIServerProcess(
            database: workspace.file("api.sqlite"), orders: orders, logPath: workspace.file("api.log"))
        let daemon = try DaemonProcess(
            directory: workspace.file("daemon"), baseURL: server.baseURL, token: APIServerProcess.token)
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
            server.process.signal(SIGKILL)
        }
        try daemon.writeConfig("probe:\n  mode: poll\n" + config)
        let stack = HostileStack(workspace: workspace, server: server, daemon: daemon)
        try await before(stack)
        if startDaemon { try await daemon.start() }
        try await body(stack)
    }

    /// A full sync over the socket, waited for; its report.
    @discardableResult
    func sync() async throws -> JSONValue { try await daemon.call("sync", .object(["wait": .bool(true)])) }

    /// Queues one-shot faults (docs/api.md section 7.2).
    func fault(_ kind: String, _ method: String, _ pathPrefix: String, count: Int = 1) async throws {
        let reply = try await admin.send(
            "POST", "/admin/faults/next",
            json: #"{"kind":"\#(kind)","method":"\#(method)","path_prefix":"\#(pathPrefix)","count":\#(count)}"#)
        guard reply.status == 200 else { throw ScenarioFailure("fault \(kind): HTTP \(reply.status)") }
    }

    /// The server's record.
    func serverRecord(_ collection: String, _ id: String) async throws -> [String: Any] {
        let reply = try await admin.send("GET", "/api/v1/\(collection)/\(id)")
        guard reply.status == 200 else { throw ScenarioFailure("\(collection)/\(id): HTTP \(reply.status)") }
        return try reply.object()
    }

    func updateOrder(_ id: String, _ fields: KeyValuePairs<String, JSONValue>) async throws -> JSONValue {
        var params: [(key: String, value: JSONValue)] = [("id", .string(id))]
        params += fields.map { (key: $0.key, value: $0.value) }
        return try await daemon.call("updateOrder", .object(params))
    }

    /// One column of one replica row (nil: no such row).
    func replica(_ table: String, _ id: String, _ column: String) throws -> String?? {
        try StoreInspector.column(store, table: table, column: column)[id]
    }

    /// The outbox as (state, last error) rows, oldest first.
    func outbox() throws -> [String] {
        try StoreInspector.strings(store, "SELECT state || ' ' || coalesce(last_error, '') FROM outbox ORDER BY seq")
    }

    /// The conflict log's outcomes for one record, oldest first.
    func auditOutcomes(_ collection: String, _ id: String) throws -> [String] {
        try StoreInspector.strings(
            store,
            "SELECT outcome FROM conflicts WHERE collection = '\(collection)' AND record_id = '\(id)' ORDER BY id")
    }

    /// The status's entry for a collection.
    func collectionStatus(_ name: String) async throws -> JSONValue? {
        guard case .array(let collections)? = try await daemon.call("status")["collections"] else { return nil }
        return collections.first { $0["collection"]?.stringValue == name }
    }

    /// Waits (up to `timeout`) for a server counter condition, re-reading the counters as the server moves.
    func waitForServer(timeout: Duration = .seconds(20), _ condition: (Counters) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(try await admin.counters()) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
