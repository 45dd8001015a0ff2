import Foundation
import GRDB
import RepairSyncControl

/// Runs the scenarios in order against one large and one small shop. The large daemon lives from its initial sync
/// to the push scenarios; then it is restarted on its store and watched while idle.
struct BenchRun {
    let plan: ScenarioPlan

    static let collections = ["clients", "orders", "devices", "tickets", "ticket_messages"]
    /// The page size the daemon uses by default (`sync.page_size`), so the floor fetches the same pages.
    static let pageSize = 500

    func run() async throws -> [ResultRow] {
        var rows: [ResultRow] = []
        Log.say("==> seeding the large shop (\(plan.orders) orders) and the small one (\(plan.smallOrders))")
        let large = try BackendProcess(
            binary: plan.binary("repair-api-dev"), database: plan.path("large-backend.sqlite"), orders: plan.orders,
            log: plan.path("large-backend.log"))
        defer { large.stop() }
        Log.say("    large: \(large.seedLine)")
        let small = try BackendProcess(
            binary: plan.binary("repair-api-dev"), database: plan.path("small-backend.sqlite"),
            orders: plan.smallOrders, log: plan.path("small-backend.log"))
        defer { small.stop() }
        Log.say("    small: \(small.seedLine)")
        let largeAPI = PlainClient(baseURL: large.baseURL, token: BackendProcess.token)
        let smallAPI = PlainClient(baseURL: small.baseURL, token: BackendProcess.token)

        // Twice, each time on an empty store, each beside its own floor: the best of each counts, so that a burst of
        // other work on the machine during one of them does not decide the ratio. The second daemon stays for the
        // scenarios that follow.
        let first = try DaemonProcess(
            binary: plan.binary("repairsyncd"), directory: plan.path("daemon-large-first"), baseURL: large.baseURL)
        let firstSync: InitialSync
        do {
            defer { first.stop() }
            firstSync = try await initialSync(daemon: first, api: largeAPI)
        }
        let daemon = try DaemonProcess(
            binary: plan.binary("repairsyncd"), directory: plan.path("daemon-large"), baseURL: large.baseURL)
        var daemonStopped = false
        defer { if !daemonStopped { daemon.stop() } }
        let largeSync = InitialSync.best(firstSync, try await initialSync(daemon: daemon, api: largeAPI))
        let control = try daemon.connect()

        let smallDaemon = try DaemonProcess(
            binary: plan.binary("repairsyncd"), directory: plan.path("daemon-small"), baseURL: small.baseURL)
        defer { smallDaemon.stop() }
        let smallSync = try smallInitialSync(smallDaemon)
        rows += initialSyncRows(large: largeSync, small: smallSync)
        rows += try await noOpSync(control: control, storePath: daemon.storePath, api: largeAPI)
        rows += try await scale(
            large: daemon, largeAPI: largeAPI, control: control, small: smallDaemon, smallAPI: smallAPI)
        smallDaemon.stop()

        rows += try await queueChange(daemon: daemon, control: control)
        rows += try badge(daemon: daemon)
        rows += try await push(daemon: daemon, control: control, api: largeAPI)

        daemon.stop()
        daemonStopped = true
        rows += try idle(directory: daemon.directory, baseURL: large.baseURL)
        return rows
    }

    // MARK: Helpers shared by the scenarios

    /// The large shop's order ids, sorted, with their replica versions.
    func orderIds(_ storePath: String) throws -> [(id: String, version: Int)] {
        try withReplica(storePath) { db in
            try Row.fetchAll(db, sql: "SELECT id, version FROM orders ORDER BY id").map { ($0["id"], $0["version"]) }
        }
    }

    /// Another program's connection to the replica (as a shop tool writes it).
    func withReplica<T>(_ storePath: String, _ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let queue = try DatabaseQueue(path: storePath, configuration: configuration)
        defer { try? queue.close() }
        return try queue.inDatabase { db in try body(db) }
    }

    /// A `sync` with `wait` over the socket: the run's report and the call's wall time.
    func syncAndWait(_ control: ControlClient, collections: [String]) throws -> (report: JSONValue, time: Duration) {
        let start = ContinuousClock.now
        let report = try control.call(
            "sync", .object(["collections": .array(collections.map { .string($0) }), "wait": .bool(true)]))
        let time = ContinuousClock.now - start
        if let stop = report["stop"], stop != .null {
            throw BenchError("the sync run stopped: \(stop)")
        }
        return (report, time)
    }

    static func pulled(_ report: JSONValue, _ collection: String) -> Int {
        report["pulled"]?[collection]?.intValue ?? 0
    }

    /// Runs blocking work on its own thread (never on the cooperative pool).
    static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
