import Foundation
import GRDB
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// Scenario 3: `queueChange` over the socket from 1 and from 20 clients, against a bare FULL commit; and the badge.
extension BenchRun {
    /// `--only queue-change`: a shop of `--orders` orders, its initial sync, then the scenario.
    func runQueueChangeOnly() async throws -> [ResultRow] {
        try await withSyncedShop("large", orders: plan.orders) { daemon, control, _ in
            try await queueChange(daemon: daemon, control: control)
        }
    }

    func queueChange(daemon: DaemonProcess, control: ControlClient) async throws -> [ResultRow] {
        Log.say("==> queueChange")
        // Paused: the changes stay queued (the push scenario sends them) and no run competes with the calls.
        _ = try control.call("pause")
        let ids = try orderIds(daemon.storePath)[plan.queuedRange].map(\.id)
        try editAtTheCounter(ids, storePath: daemon.storePath)
        let floorPath = (daemon.directory as NSString).appendingPathComponent("state/floor-commit.sqlite")
        var floor = try SQLiteFloor.fullCommits(at: floorPath, count: 500)

        var single = Samples()
        let singleCost = DaemonCost(daemon.pid)
        for id in ids.prefix(ScenarioPlan.singleClientCalls) {
            single.append(try Self.timedQueueChange(control, id: id))
        }
        let singleSpent = singleCost.perChange(ScenarioPlan.singleClientCalls)
        floor.append(contentsOf: try SQLiteFloor.fullCommits(at: floorPath, count: 500))

        let rest = Array(ids.dropFirst(ScenarioPlan.singleClientCalls))
        let clients = ScenarioPlan.concurrentClients
        let chunks = (0..<clients).map { client in stride(from: client, to: rest.count, by: clients).map { rest[$0] } }
        let socket = daemon.socketPath
        let concurrentCost = DaemonCost(daemon.pid)
        let (concurrent, wall) = try await Self.fromClients(chunks, socket: socket) { client, chunk in
            var samples = Samples()
            for id in chunk { samples.append(try Self.timedQueueChange(client, id: id)) }
            return samples
        }
        let concurrentSpent = concurrentCost.perChange(rest.count)
        let rate = Double(rest.count) / wall.seconds
        let floorRate = 1000 / floor.median

        // The same 9,000 rows edited again, queued by the same 20 clients in JSON-RPC batches (what a tool that
        // changed many records sends): each edit joins its pending change, so the push scenario still finds 10,000.
        try editAtTheCounter(rest, storePath: daemon.storePath, notes: "edited again at the counter (bench)")
        let batchSize = ScenarioPlan.queueChangeBatch
        let batchCost = DaemonCost(daemon.pid)
        let (batches, batchWall) = try await Self.fromClients(chunks, socket: socket) { client, chunk in
            var samples = Samples()
            for start in stride(from: 0, to: chunk.count, by: batchSize) {
                samples.append(
                    try Self.timedQueueChanges(client, ids: Array(chunk[start..<min(start + batchSize, chunk.count)])))
            }
            return samples
        }
        let batchRate = Double(rest.count) / batchWall.seconds
        let batchSpent = batchCost.perChange(rest.count)

        Log.say(
            "    floor p50 \(Format.ms(floor.median)) p99 \(Format.ms(floor.p99)); 1 client p50 \(Format.ms(single.median)) p99 \(Format.ms(single.p99)); 20 clients \(Format.rate(rate, "changes")); in batches of \(batchSize) \(Format.rate(batchRate, "changes"))"
        )
        Log.say(
            "    the daemon per change: 1 client \(singleSpent); 20 clients \(concurrentSpent); in batches \(batchSpent)"
        )
        let pending = try control.call("status")["pending"]?.intValue ?? -1
        guard pending == ids.count else {
            throw BenchError("expected \(ids.count) pending changes, status says \(pending)")
        }
        return [
            ResultRow(
                scenario: "queueChange, 1 client (p50 / p99)",
                measured: "\(Format.ms(single.median)) / \(Format.ms(single.p99))",
                baseline: "FULL commit \(Format.ms(floor.median)) / \(Format.ms(floor.p99))",
                ratio: "p99 " + Format.ratio(single.p99 / floor.p99), target: "p99 ≤ 2× floor p99",
                passed: single.p99 <= 2 * floor.p99),
            ResultRow(
                scenario: "queueChange, 20 clients",
                measured:
                    "\(Format.rate(rate, "changes")) (p50 \(Format.ms(concurrent.median)), p99 \(Format.ms(concurrent.p99)))",
                baseline: "one FULL commit each: \(Format.rate(floorRate, "commits"))",
                ratio: Format.ratio(rate / floorRate),
                target: "≥ 10000 changes/s", passed: rate >= 10_000),
            ResultRow(
                scenario: "queueChange, 20 clients, batches of \(batchSize) (one JSON-RPC batch per request line)",
                measured:
                    "\(Format.rate(batchRate, "changes")) (p50 \(Format.ms(batches.median)), p99 \(Format.ms(batches.p99)) per batch)",
                baseline: "one call per line above: \(Format.rate(rate, "changes"))",
                ratio: Format.ratio(batchRate / rate),
                target: "≥ 10000 changes/s", passed: batchRate >= 10_000),
        ]
    }

    /// The daemon's CPU time and context switches from a starting point, per change queued since, and the CPU time
    /// the bench's own clients spent meanwhile (on the same cores).
    struct DaemonCost {
        let daemon: ProcessStats.Usage
        let clients = ProcessStats.Usage(getpid())

        init(_ pid: Int32) { daemon = ProcessStats.Usage(pid) }

        /// "84 µs CPU, 7.9 context switches, 2.1 KiB written (clients 30 µs)".
        func perChange(_ changes: Int) -> String {
            let changes = Double(max(changes, 1))
            let (cpu, switches, written) = daemon.spent()
            let clientsCPU = clients.spent().cpuSeconds
            return String(
                format: "%.0f µs CPU, %.1f context switches, %.1f KiB written (clients %.0f µs)",
                cpu / changes * 1_000_000, Double(switches) / changes, written / changes / 1024,
                clientsCPU / changes * 1_000_000)
        }
    }

    /// Another program changes the orders' notes in the replica (one transaction), as a counter tool does before it
    /// calls `queueChange`.
    func editAtTheCounter(_ ids: [String], storePath: String, notes: String = "edited at the counter (bench)") throws {
        try withReplica(storePath) { db in
            try db.inTransaction {
                let statement = try db.makeStatement(sql: "UPDATE orders SET notes = ? WHERE id = ?")
                for id in ids { try statement.execute(arguments: [notes, id]) }
                return .commit
            }
        }
    }

    static func timedQueueChange(_ client: ControlClient, id: String) throws -> Double {
        let start = ContinuousClock.now
        let result = try client.call("queueChange", .object(["kind": .string("order-updated"), "id": .string(id)]))
        let elapsed = (ContinuousClock.now - start).milliseconds
        guard result["queued"]?.boolValue == true else { throw BenchError("queueChange \(id): \(result)") }
        return elapsed
    }

    /// Each chunk of ids on a connection and a thread of its own, all at once: their samples together, and the wall
    /// time from the first call to the last answer.
    static func fromClients(
        _ chunks: [[String]], socket: String, _ calls: @escaping @Sendable (ControlClient, [String]) throws -> Samples
    ) async throws -> (samples: Samples, wall: Duration) {
        let start = ContinuousClock.now
        let samples = try await withThrowingTaskGroup(of: Samples.self) { group in
            for chunk in chunks {
                group.addTask { try await Self.blocking { try calls(try ControlClient(path: socket), chunk) } }
            }
            var all = Samples()
            for try await samples in group { all.append(contentsOf: samples) }
            return all
        }
        return (samples, ContinuousClock.now - start)
    }

    /// One batch of `queueChange` calls (one request line); every one must be queued.
    static func timedQueueChanges(_ client: ControlClient, ids: [String]) throws -> Double {
        let start = ContinuousClock.now
        let results = try client.callBatch(RPC.QueueChange.self, ids.map { .init(kind: .orderUpdated, id: $0) })
        let elapsed = (ContinuousClock.now - start).milliseconds
        for (id, result) in zip(ids, results) {
            guard case .success(let queued) = result, queued.queued else {
                throw BenchError("queueChange \(id) in a batch: \(result)")
            }
        }
        return elapsed
    }

    /// `repairctl status --badge` against its floor (`repairsync-badge-floor`: connect, send `status`, print the
    /// count — the same build, no parser, no Foundation), interleaved round by round; `/bin/true` for scale. Then
    /// the stripped sizes of the two binaries.
    func badge(daemon: DaemonProcess) throws -> [ResultRow] {
        Log.say("==> repairctl status --badge")
        let repairctl = plan.binary("repairctl").path
        let floorBinary = plan.binary("repairsync-badge-floor").path
        let environment = ["REPAIRSYNCD_SOCKET": daemon.socketPath]
        var badge = Samples()
        var floor = Samples()
        var truth = Samples()
        for round in 0..<43 {
            let trueTime = try Spawn.time(["/bin/true"])
            let floorTime = try Spawn.time([floorBinary], environment: environment)
            let badgeTime = try Spawn.time([repairctl, "status", "--badge"], environment: environment)
            // The first rounds warm the page cache.
            if round >= 3 {
                truth.append(trueTime)
                floor.append(floorTime)
                badge.append(badgeTime)
            }
        }
        Log.say(
            "    badge median \(Format.ms(badge.median)), floor \(Format.ms(floor.median)), /bin/true \(Format.ms(truth.median))"
        )
        let ratio = badge.median / floor.median
        var rows = [
            ResultRow(
                scenario: "repairctl status --badge (median of 40)", measured: Format.ms(badge.median),
                baseline:
                    "floor (connect, status, print) \(Format.ms(floor.median)); /bin/true \(Format.ms(truth.median))",
                ratio: Format.ratio(ratio), target: "≤ 1.5× floor", passed: ratio <= 1.5)
        ]
        if let size = try? StrippedSize.of(repairctl, in: plan.workDirectory),
            let floorSize = try? StrippedSize.of(floorBinary, in: plan.workDirectory)
        {
            rows.append(
                ResultRow(
                    scenario: "repairctl binary, stripped", measured: Format.mib(Double(size) / 1_048_576),
                    baseline: "floor \(Format.mib(Double(floorSize) / 1_048_576))",
                    ratio: Format.ratio(Double(size) / Double(floorSize)),
                    target: "(reported)", passed: nil))
        }
        return rows
    }
}
