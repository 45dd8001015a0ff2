import Foundation
import GRDB
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

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
        let large = try await APIServerProcess(
            database: plan.path("large-backend.sqlite"), orders: plan.orders, logPath: plan.path("large-backend.log"))
        defer { large.process.signal(SIGTERM) }
        Log.say("    large: \(Self.seedLine(large))")
        let small = try await APIServerProcess(
            database: plan.path("small-backend.sqlite"), orders: plan.smallOrders,
            logPath: plan.path("small-backend.log"))
        defer { small.process.signal(SIGTERM) }
        Log.say("    small: \(Self.seedLine(small))")
        let largeAPI = PlainClient(baseURL: large.baseURL, token: APIServerProcess.token)
        let smallAPI = PlainClient(baseURL: small.baseURL, token: APIServerProcess.token)

        // Twice, each time on an empty store, each beside its own floor: the best of each counts, so that a burst of
        // other work on the machine during one of them does not decide the ratio. The second daemon stays for the
        // scenarios that follow.
        // At --scale, once: the large shop's sync takes minutes, and the run compares sizes rather than builds.
        var firstSync: InitialSync?
        if plan.scaleFactor == nil {
            let first = try Self.daemon(directory: plan.path("daemon-large-first"), baseURL: large.baseURL)
            defer {
                first.process?.signal(SIGKILL)
                first.notify.close()
            }
            firstSync = try await initialSync(daemon: first, api: largeAPI)
            await first.stop()
        }
        let daemon = try Self.daemon(directory: plan.path("daemon-large"), baseURL: large.baseURL)
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        let secondSync = try await initialSync(daemon: daemon, api: largeAPI)
        let largeSync = firstSync.map { InitialSync.best($0, secondSync) } ?? secondSync
        let control = try ControlClient(path: daemon.socketPath)

        let smallDaemon = try Self.daemon(directory: plan.path("daemon-small"), baseURL: small.baseURL)
        defer {
            smallDaemon.process?.signal(SIGKILL)
            smallDaemon.notify.close()
        }
        let smallSync = try await smallInitialSync(smallDaemon)
        rows += initialSyncRows(large: largeSync, small: smallSync)
        if plan.scaleFactor == nil { rows += try await httpsInitialSync(plain: largeSync) }
        if plan.scaleFactor == nil { rows += try await compressionOverThrottledLink() }
        rows += try await noOpSync(control: control, storePath: daemon.storePath, api: largeAPI)
        rows += try await scale(
            large: daemon, largeAPI: largeAPI, control: control, small: smallDaemon, smallAPI: smallAPI)
        rows += try replicaReads(large: daemon, control: control, small: smallDaemon)
        if plan.scaleFactor != nil {
            await smallDaemon.stop()
            await daemon.stop()
            await large.stop()
            await small.stop()
            return rows
        }

        rows += try await queueChange(daemon: daemon, control: control)
        rows += try badge(daemon: daemon)
        rows += try await push(daemon: daemon, control: control, api: largeAPI)
        // On the small shop: the dev backend's creates slow with its size (both clients alike), which made this
        // scenario three minutes of the run on the large one and says nothing more about the daemon.
        rows += try await booking(
            daemon: smallDaemon, control: try ControlClient(path: smallDaemon.socketPath), api: smallAPI)
        await smallDaemon.stop()
        rows += try await serverPush(baseURL: small.baseURL)

        await daemon.stop()
        rows += try await idle(directory: daemon.directory, baseURL: large.baseURL)
        await large.stop()
        await small.stop()
        return rows
    }

    /// `repairsyncd` for `baseURL` with the default sync settings (pages of 500), notice-level logs, in `directory`
    /// (a store already there is kept: the idle scenario restarts on the large shop's). Not started yet.
    static func daemon(directory: String, baseURL: String) throws -> DaemonProcess {
        let daemon = try DaemonProcess(directory: directory, baseURL: baseURL, token: APIServerProcess.token)
        try daemon.writeConfig("log:\n  level: notice", pageSize: pageSize)
        return daemon
    }

    /// Starts `daemon` and waits for the end of its start-up run; the status then, and the time from process start.
    static func startAndWaitForFirstRun(_ daemon: DaemonProcess) async throws -> (status: JSONValue, time: Duration) {
        let started = ContinuousClock.now
        try await daemon.start()
        guard try await daemon.waitForStatus(timeout: 900, { ($0["metrics"]?["runs"]?.intValue ?? 0) >= 1 }) != nil
        else { throw BenchError("no sync run finished within 900 s: \(daemon.log().suffix(2000))") }
        let time = ContinuousClock.now - started
        // The whole status (per-collection record counts included) as `status` answers it.
        return (try await daemon.call("status"), time)
    }

    /// For the `--only` scenarios: a shop of `orders` orders seeded as `name` (`name-backend.sqlite`), a daemon on it
    /// (`daemon-name`) after its initial sync, and `body` with the daemon, a control client and a plain API client;
    /// then both stopped (killed if `body` throws).
    func withSyncedShop(
        _ name: String, orders: Int, _ body: (DaemonProcess, ControlClient, PlainClient) async throws -> [ResultRow]
    ) async throws -> [ResultRow] {
        Log.say("==> seeding a shop of \(orders) orders (\(name))")
        let server = try await APIServerProcess(
            database: plan.path("\(name)-backend.sqlite"), orders: orders, logPath: plan.path("\(name)-backend.log"))
        defer { server.process.signal(SIGTERM) }
        let daemon = try Self.daemon(directory: plan.path("daemon-\(name)"), baseURL: server.baseURL)
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        Log.say("==> initial sync of the \(name) shop")
        try Self.requireSuccess(try await Self.startAndWaitForFirstRun(daemon).status)
        let rows = try await body(
            daemon, try ControlClient(path: daemon.socketPath),
            PlainClient(baseURL: server.baseURL, token: APIServerProcess.token))
        await daemon.stop()
        await server.stop()
        return rows
    }

    /// For the `--only` scenarios that compare sizes: the large shop (`--orders`) and the small one (`--small-orders`),
    /// each synced as in `withSyncedShop`, and `body` with both daemons, the large one's control client and both
    /// shops' API clients.
    func withLargeAndSmallShop(
        _ body: (
            _ large: DaemonProcess, _ control: ControlClient, _ largeAPI: PlainClient, _ small: DaemonProcess,
            _ smallAPI: PlainClient
        ) async throws -> [ResultRow]
    ) async throws -> [ResultRow] {
        try await withSyncedShop("large", orders: plan.orders) { large, control, largeAPI in
            try await withSyncedShop("small", orders: plan.smallOrders) { small, _, smallAPI in
                try await body(large, control, largeAPI, small, smallAPI)
            }
        }
    }

    /// What the seeder said on standard error ("seeded N records in …").
    static func seedLine(_ server: APIServerProcess) -> String {
        server.process.log().split(separator: "\n").first { $0.hasPrefix("seeded") }.map(String.init) ?? ""
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
