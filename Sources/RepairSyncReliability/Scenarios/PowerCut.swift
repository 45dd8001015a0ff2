internal import Foundation
internal import Logging
internal import RepairAPIDev
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncStore

/// Power cuts (docs/reliability.md, "Power cuts"), the way SQLite tests its own crash safety: the workload runs in
/// `repairsync-power-cut`, whose SQLite goes through the crash VFS, and the power is cut at one of `cuts` points
/// drawn by `seed` — at a write or sync of the store while pages are applied and bursts of `queueChange` and
/// `updateOrder`/`updateDevice` from concurrent callers are group-committed, or while everything is pushed. The
/// writes since each file's last sync are dropped, kept in part, or the last one torn. After each cut the store is
/// opened as the daemon opens it (`ReplicaStore.open`, then the engine) and must hold:
///
/// - `integrity_check` ok;
/// - every change whose acknowledgement returned before the cut is in the outbox or on the server;
/// - each collection's cursor is a page boundary, and exactly the pages up to it are in the replica (no page's
///   records without its cursor, no cursor without its records);
/// - a sync converges: nothing left in the outbox, the replica equal to the server, every acknowledged value on it.
///
/// Every cut starts from the same two files (the server's, and a replica synced before the server changed), so a
/// cut point and its seed replay exactly.
public struct PowerCut: Sendable {
    public var cuts: Int
    public var seed: UInt64
    /// The writer's `synchronous` in the workload: `full` as shipped; `normal` shows the scenario fails without it.
    public var synchronous: String
    /// The workload program (a mutant's build, for scripts/mutants/power-cut).
    public var helper: String
    public var orders = 100
    public var pageSize = 10
    public var callers = 8
    /// Cuts run at the same time.
    public var parallel = 3

    public init(cuts: Int, seed: UInt64 = 1, synchronous: String = "full", helper: String? = nil) {
        self.cuts = cuts
        self.seed = seed
        self.synchronous = synchronous
        self.helper = helper ?? Binaries.path("repairsync-power-cut")
    }

    static let token = "power-cut-token"

    /// A link meter that never shrinks a page: the scenario knows which records each page of `pageSize` holds, and a
    /// loaded machine makes even loopback look slow.
    static func fixedPages() -> LinkMeter { LinkMeter(targetPageTime: .seconds(86_400)) }

    public func run() async throws -> ScenarioReport {
        // On tmpfs when there is one: the crash VFS decides what a cut keeps, so the disk's own fsync only costs time.
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : nil
        return try await Workspace.with("power-cut", base: base) { workspace in
            try await ScenarioReport.measure("power cuts") { report in
                let shop = try await PowerCutShop.make(in: workspace, orders: orders, pageSize: pageSize)
                // One run without a cut: how many events the workload makes (the range the cut points are drawn
                // from), and the proof that the checks hold when nothing is cut.
                var tally = Tally()
                let calibration = try await cut(
                    shop, workspace, Point(index: 0, event: 0, mode: "drop", seed: 0), into: &tally)
                guard calibration > 0 else { throw ScenarioFailure("the workload reported no events") }
                var random = SplitMix64(seed: seed)
                let points = (1...max(1, cuts)).map { index in
                    Point(
                        index: index, event: Int64(1 + random.next() % UInt64(calibration)),
                        mode: ["drop", "subset", "tear"][Int(random.next() % 3)], seed: random.next())
                }
                // A few cuts at a time: each waits mostly on its processes, one at a time would leave the cores idle.
                let results = try await withThrowingTaskGroup(of: Tally.self) { group in
                    var pending = points[...]
                    var results: [Tally] = []
                    for _ in 0..<parallel {
                        guard let point = pending.popFirst() else { break }
                        group.addTask { try await self.tally(shop, workspace, point) }
                    }
                    while let result = try await group.next() {
                        results.append(result)
                        if let point = pending.popFirst() {
                            group.addTask { try await self.tally(shop, workspace, point) }
                        }
                    }
                    return results
                }
                for result in results.sorted(by: { $0.firstIndex < $1.firstIndex }) { tally.merge(result) }
                report.add(Figure("events in the workload (writes and syncs of the store)", "\(calibration)"))
                report.add(.atLeast("power cuts", tally.cuts, cuts * 9 / 10))
                report.add(
                    Figure(
                        "cuts by mode (drop / subset / tear)",
                        "\(tally.byMode["drop", default: 0]) / \(tally.byMode["subset", default: 0]) / \(tally.byMode["tear", default: 0])"
                    ))
                report.add(Figure("unsynced writes lost or torn at the cuts", "\(tally.unsyncedAtCuts)"))
                report.add(Figure("acknowledged changes checked", "\(tally.acknowledged)"))
                report.add(.count("acknowledged changes lost", tally.lost, mustBe: 0))
                report.add(.count("stores that did not open or failed integrity_check", tally.unsound, mustBe: 0))
                report.add(
                    .count(
                        "pages without their cursor, or cursors without their pages", tally.pageMismatches, mustBe: 0))
                report.add(.count("cuts after which a sync did not converge", tally.notConverged, mustBe: 0))
                report.notes += tally.examples
            }
        }
    }

    /// Where and how one cut happens.
    struct Point: Sendable {
        var index: Int
        /// The event the power goes at (0: never).
        var event: Int64
        var mode: String
        var seed: UInt64
    }

    /// A point past the end of a run that made fewer events than the calibration (the concurrent callers' commits
    /// batch differently from one run to the next) is drawn again within what that run made, twice at most: the
    /// cuts asked for are cuts made, not fewer when the machine is busy (71 of 80 in a full-suite run).
    private func tally(_ shop: PowerCutShop, _ workspace: Workspace, _ point: Point) async throws -> Tally {
        var tally = Tally(firstIndex: point.index)
        var point = point
        for _ in 0..<3 {
            let events = try await cut(shop, workspace, point, into: &tally)
            guard events > 0, events < point.event else { break }
            point.event = 1 + Int64(point.seed % UInt64(events))
        }
        return tally
    }

    struct Tally: Sendable {
        var firstIndex = 0
        var cuts = 0
        var byMode: [String: Int] = [:]
        var unsyncedAtCuts = 0
        var acknowledged = 0
        var lost = 0
        var unsound = 0
        var pageMismatches = 0
        var notConverged = 0
        var examples: [String] = []

        mutating func note(_ text: String) {
            if examples.count < 12 { examples.append(text) }
        }

        mutating func merge(_ other: Tally) {
            cuts += other.cuts
            byMode.merge(other.byMode, uniquingKeysWith: +)
            unsyncedAtCuts += other.unsyncedAtCuts
            acknowledged += other.acknowledged
            lost += other.lost
            unsound += other.unsound
            pageMismatches += other.pageMismatches
            notConverged += other.notConverged
            for example in other.examples { note(example) }
        }
    }

    /// One run of the workload cut at `point` (0: not cut), then the checks. Returns the events the run made when
    /// it was not cut.
    func cut(_ shop: PowerCutShop, _ workspace: Workspace, _ point: Point, into tally: inout Tally) async throws
        -> Int64
    {
        let directory = workspace.file("cut-\(point.index)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/replica.sqlite"
        try shop.copyReplica(to: storePath)
        let server = try await shop.startServer(copyingTo: directory + "/backend.sqlite")
        do {
            let events = try await workload(shop, directory, storePath, server, point, into: &tally)
            await server.stop()
            return events
        } catch {
            await server.stop()
            throw error
        }
    }

    private func workload(
        _ shop: PowerCutShop, _ directory: String, _ storePath: String, _ server: PowerCutServer, _ point: Point,
        into tally: inout Tally
    ) async throws -> Int64 {
        let label = "cut \(point.index) at event \(point.event) (\(point.mode), seed \(point.seed))"

        let acksPath = directory + "/acks"
        let child = try ChildProcess(
            [
                helper, "--store", storePath, "--api", server.baseURL, "--token", Self.token, "--acks", acksPath,
                "--page-size", "\(pageSize)", "--queue-orders", shop.queued.joined(separator: ","),
                "--update-orders", shop.updatedOrders.joined(separator: ","),
                "--update-devices", shop.updatedDevices.joined(separator: ","), "--callers", "\(callers)",
                "--tag", "cut-\(point.index)", "--cut-at", "\(point.event)", "--mode", point.mode, "--seed",
                "\(point.seed)",
                "--synchronous", synchronous,
            ], environment: ProcessInfo.processInfo.environment, logPath: directory + "/helper.log")
        guard let status = await child.waitForExit(timeout: 300) else {
            await child.killNow()
            throw ScenarioFailure("\(label): the workload did not end within 300 s")
        }
        let output = child.log()
        var events: Int64 = 0
        switch status {
        case 86:
            tally.cuts += 1
            tally.byMode[point.mode, default: 0] += 1
            tally.unsyncedAtCuts +=
                Int(output.split(separator: "\n").last { $0.hasPrefix("unsynced ") }?.split(separator: " ").last ?? "")
                ?? 0
        case 0:
            events =
                Int64(output.split(separator: "\n").last { $0.hasPrefix("events ") }?.split(separator: " ").last ?? "")
                ?? 0
        default:
            throw ScenarioFailure("\(label): the workload failed (exit \(status)): \(output.suffix(1500))")
        }
        let acknowledged = Acknowledgement.read(acksPath)
        tally.acknowledged += acknowledged.count
        try await check(
            shop, storePath: storePath, server: server, acknowledged: acknowledged, label: label, into: &tally)
        return events
    }

    /// Opens the cut store as the daemon would and checks it; then syncs it and checks that it converged.
    func check(
        _ shop: PowerCutShop, storePath: String, server: PowerCutServer, acknowledged: [Acknowledgement], label: String,
        into tally: inout Tally
    ) async throws {
        let store: ReplicaStore
        do {
            store = try ReplicaStore.open(at: storePath)
        } catch {
            tally.unsound += 1
            tally.note("\(label): the store does not open: \(error)")
            return
        }
        defer { try? store.close() }
        let problems = try store.integrityProblems()
        guard problems.isEmpty else {
            tally.unsound += 1
            tally.note("\(label): integrity_check: \(problems.prefix(3).joined(separator: "; "))")
            return
        }
        for mismatch in try shop.pageMismatches(store) {
            tally.pageMismatches += 1
            tally.note("\(label): \(mismatch)")
        }

        var logger = Logger(label: "power-cut")
        logger.logLevel = .critical
        let engine = try SyncEngine(
            store: store,
            api: APIClient(
                configuration: .init(baseURL: server.baseURL, token: Self.token), link: PowerCut.fixedPages()),
            configuration: EngineConfiguration(pageSize: pageSize, completedHold: .zero), logger: logger)
        let outbox = try engine.outboxEntries()
        let before = try await server.values(for: acknowledged)
        for ack in acknowledged {
            let queued = outbox.contains { entry in
                entry.collection.name == ack.collection && entry.recordId == ack.id
                    && entry.fields[ack.field] == .some(ack.value)
            }
            if !queued, before[ack.key] != ack.value {
                tally.lost += 1
                tally.note(
                    "\(label): acknowledged \(ack.collection) \(ack.id) \(ack.field) = \"\(ack.value)\" is neither in the outbox nor on the server"
                )
            }
        }

        let report = await engine.performFullSync()
        var differences: [String] = []
        if !report.succeeded { differences.append("the sync stopped: \(report.stop ?? "")") }
        let left = try engine.outboxEntries()
        if !left.isEmpty { differences.append("\(left.count) changes left in the outbox (\(left.first!.state))") }
        let convergence = try await Convergence.compare(store: storePath, server: server.admin)
        if convergence.mismatches > 0 {
            differences.append(
                "\(convergence.mismatches) records differ from the server: \(convergence.examples.prefix(2))")
        }
        let after = try await server.values(for: acknowledged)
        let missing = acknowledged.filter { after[$0.key] != $0.value }
        if !missing.isEmpty {
            differences.append("\(missing.count) acknowledged values not on the server, e.g. \(missing[0].id)")
        }
        if !differences.isEmpty {
            tally.notConverged += 1
            tally.note("\(label): \(differences.joined(separator: "; "))")
        }
    }
}

/// One line of the workload's acknowledgement log: `collection id field value`.
struct Acknowledgement: Sendable {
    var collection: String
    var id: String
    var field: String
    var value: String
    var key: String { "\(collection)/\(id)/\(field)" }

    static func read(_ path: String) -> [Acknowledgement] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            guard parts.count == 4 else { return nil }
            return Acknowledgement(collection: parts[0], id: parts[1], field: parts[2], value: parts[3])
        }
    }
}
