import Foundation
import GRDB
import NIOHTTP1
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

/// Scenario 1: the first sync of a shop, against the floor; peak RSS at two sizes.
extension BenchRun {
    struct InitialSync {
        var time: Duration
        var records: Int
        var peakMiB: Double
        var floorFetch: Duration
        var floorInsert: Duration
        /// The floor's insert with the list indexes built after it, as the daemon's first pull does (for comparison).
        var floorInsertIndexesLast: Duration = .zero

        /// The faster of two runs and of their floors; the higher of their peaks.
        static func best(_ a: InitialSync, _ b: InitialSync) -> InitialSync {
            InitialSync(
                time: min(a.time, b.time), records: a.records, peakMiB: max(a.peakMiB, b.peakMiB),
                floorFetch: min(a.floorFetch, b.floorFetch), floorInsert: min(a.floorInsert, b.floorInsert),
                floorInsertIndexesLast: min(a.floorInsertIndexesLast, b.floorInsertIndexesLast))
        }
    }

    /// The daemon was just started on an empty store; its start-up run is the initial sync (process start to the end
    /// of the run, dashboard snapshot included). The floor: the same pages fetched by a plain client and discarded,
    /// plus the same rows inserted into an empty replica file in one transaction.
    func initialSync(daemon: DaemonProcess, api: PlainClient) async throws -> InitialSync {
        Log.say("==> initial sync of the large shop")
        let (status, time) = try await Self.startAndWaitForFirstRun(daemon)
        try Self.requireSuccess(status)
        let peak = ProcessStats.peakResidentMiB(daemon.pid)
        let records = Self.records(status)
        Log.say("    repairsyncd: \(records) records in \(Format.seconds(time)), peak RSS \(Format.mib(peak))")
        var fetches: [Duration] = []
        for _ in 0..<2 {
            fetches.append(try await fetchFeeds(api))
            Log.say("    floor: fetched every page in \(Format.seconds(fetches.last!))")
        }
        let insert = try SQLiteFloor.insertRows(
            from: daemon.storePath, into: plan.path("floor-replica-\(UUID().uuidString.prefix(6)).sqlite"))
        Log.say("    floor: inserted \(insert.rows) rows in \(Format.seconds(insert.time))")
        guard insert.rows == records else {
            throw BenchError("the floor inserted \(insert.rows) rows, the daemon has \(records)")
        }
        let indexesLast = try SQLiteFloor.insertRows(
            from: daemon.storePath, into: plan.path("floor-replica-\(UUID().uuidString.prefix(6)).sqlite"),
            listIndexesLast: true)
        Log.say(
            "    floor: inserted \(indexesLast.rows) rows in \(Format.seconds(indexesLast.time)) with the list indexes built last"
        )
        return InitialSync(
            time: time, records: records, peakMiB: peak, floorFetch: fetches.min()!, floorInsert: insert.time,
            floorInsertIndexesLast: indexesLast.time)
    }

    /// `--only initial-sync`: the large shop's initial sync twice, each on an empty store beside its floor, as the
    /// full run does; the first two rows (time and rate against the floor).
    func runInitialSyncOnly() async throws -> [ResultRow] {
        Log.say("==> seeding a shop of \(plan.orders) orders")
        let server = try await APIServerProcess(
            database: plan.path("large-backend.sqlite"), orders: plan.orders, logPath: plan.path("large-backend.log"))
        defer { server.process.signal(SIGTERM) }
        let api = PlainClient(baseURL: server.baseURL, token: APIServerProcess.token)
        var runs: [InitialSync] = []
        for round in 1...2 {
            let daemon = try Self.daemon(directory: plan.path("daemon-initial-\(round)"), baseURL: server.baseURL)
            defer {
                daemon.process?.signal(SIGKILL)
                daemon.notify.close()
            }
            runs.append(try await initialSync(daemon: daemon, api: api))
            await daemon.stop()
        }
        await server.stop()
        let best = InitialSync.best(runs[0], runs[1])
        return Array(initialSyncRows(large: best, small: best).prefix(2))
    }

    /// The small shop's initial sync: its peak RSS is the second size.
    func smallInitialSync(_ daemon: DaemonProcess) async throws -> InitialSync {
        Log.say("==> initial sync of the small shop")
        let (status, time) = try await Self.startAndWaitForFirstRun(daemon)
        try Self.requireSuccess(status)
        let peak = ProcessStats.peakResidentMiB(daemon.pid)
        Log.say(
            "    repairsyncd: \(Self.records(status)) records in \(Format.seconds(time)), peak RSS \(Format.mib(peak))")
        return InitialSync(
            time: time, records: Self.records(status), peakMiB: peak, floorFetch: .zero, floorInsert: .zero)
    }

    func initialSyncRows(large: InitialSync, small: InitialSync) -> [ResultRow] {
        let floor = large.floorFetch + large.floorInsert
        let ratio = large.time / floor
        let rate = Double(large.records) / large.time.seconds
        let floorRate = Double(large.records) / floor.seconds
        let flat = large.peakMiB / small.peakMiB
        return [
            ResultRow(
                scenario: "initial sync, \(large.records) records (best of 2)", measured: Format.seconds(large.time),
                baseline:
                    "floor \(Format.seconds(floor)) (fetch \(Format.seconds(large.floorFetch)) + insert \(Format.seconds(large.floorInsert)); insert with the list indexes built last \(Format.seconds(large.floorInsertIndexesLast)))",
                ratio: Format.ratio(ratio), target: "≤ 1.30× floor", passed: ratio <= 1.3),
            ResultRow(
                scenario: "initial sync rate", measured: Format.rate(rate, "records"),
                baseline: "floor \(Format.rate(floorRate, "records"))", ratio: Format.ratio(rate / floorRate),
                target: "≥ 60000 records/s", passed: rate >= 60_000),
            ResultRow(
                scenario: "peak RSS, initial sync (\(large.records) records)", measured: Format.mib(large.peakMiB),
                baseline: "\(small.records) records: \(Format.mib(small.peakMiB))", ratio: Format.ratio(flat),
                target: "≤ 150 MiB, flat (≤ 1.25×)", passed: large.peakMiB <= 150 && flat <= 1.25),
        ]
    }

    /// Every collection's feed from the beginning with the plain client (pages discarded).
    func fetchFeeds(_ api: PlainClient) async throws -> Duration {
        let start = ContinuousClock.now
        for collection in Self.collections {
            _ = try await api.drainFeed(collection, pageSize: Self.pageSize)
        }
        return ContinuousClock.now - start
    }

    static func requireSuccess(_ status: JSONValue) throws {
        guard let success = status["lastSuccessAt"], success != .null else {
            throw BenchError("the sync run did not succeed: \(status["message"] ?? status["state"] ?? .null)")
        }
    }

    static func records(_ status: JSONValue) -> Int {
        guard case .array(let collections)? = status["collections"] else { return 0 }
        return collections.compactMap { $0["records"]?.intValue }.reduce(0, +)
    }

    /// Scenario 2: a full incremental run (the five collections) when nothing changed, against a plain client
    /// sending the same requests (health, then one feed request per collection from the stored cursor).
    func noOpSync(control: ControlClient, storePath: String, api: PlainClient) async throws -> [ResultRow] {
        Log.say("==> incremental sync with nothing changed")
        _ = try syncAndWait(control, collections: Self.collections)
        var daemon = Samples()
        for _ in 0..<9 {
            let (report, time) = try syncAndWait(control, collections: Self.collections)
            let pulled = Self.collections.map { Self.pulled(report, $0) }.reduce(0, +)
            guard pulled == 0 else { throw BenchError("a no-op sync pulled \(pulled) records") }
            daemon.append(time.milliseconds)
        }
        let cursors = try withReplica(storePath) { db in
            try Dictionary(
                uniqueKeysWithValues: Self.collections.map { collection in
                    (
                        collection,
                        try String.fetchOne(
                            db, sql: "SELECT cursor FROM sync_metadata WHERE collection = ?", arguments: [collection])
                    )
                })
        }
        var baseline = Samples()
        for _ in 0..<9 {
            let start = ContinuousClock.now
            _ = try await api.send(.GET, "/api/v1/health")
            for collection in Self.collections {
                _ = try await api.drainFeed(collection, from: cursors[collection] ?? nil, pageSize: Self.pageSize)
            }
            baseline.append((ContinuousClock.now - start).milliseconds)
        }
        Log.say("    repairsyncd median \(Format.ms(daemon.median)), plain client \(Format.ms(baseline.median))")
        return [
            ResultRow(
                scenario: "incremental sync, nothing changed (median of 9)", measured: Format.ms(daemon.median),
                baseline: "plain client, same 6 requests: \(Format.ms(baseline.median))",
                ratio: Format.ratio(daemon.median / baseline.median), target: "≤ 50 ms", passed: daemon.median <= 50)
        ]
    }
}
