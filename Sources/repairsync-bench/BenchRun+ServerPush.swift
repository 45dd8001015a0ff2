import Foundation
import GRDB
import NIOHTTP1
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 22, item 1: how long a change made at another workstation takes to show in this replica — with the
/// server's change stream (`sync.events`, the default) and without it (the periodic schedule, shortened to
/// `periodicForBench` so the row finishes in minutes) — and what the open stream costs an idle daemon.
extension BenchRun {
    /// The periodic interval of the run without the stream (production: 15 min, so expect interval/2 on average).
    static let periodicForBench = 2
    static let serverEdits = 100

    /// `--only server-push`: the scenario alone on a shop of `--small-orders` orders.
    func runServerPushOnly() async throws -> [ResultRow] {
        Log.say("==> seeding a shop of \(plan.smallOrders) orders")
        let server = try await APIServerProcess(
            database: plan.path("push-backend.sqlite"), orders: plan.smallOrders, logPath: plan.path("push-backend.log")
        )
        defer { server.process.signal(SIGTERM) }
        let rows = try await serverPush(baseURL: server.baseURL)
        await server.stop()
        return rows
    }

    func serverPush(baseURL: String) async throws -> [ResultRow] {
        let api = PlainClient(baseURL: baseURL, token: APIServerProcess.token)
        Log.say("==> server edits seen in the replica: \(Self.serverEdits) with the change stream")
        let streamed = try await editLatency(
            api: api, baseURL: baseURL, directory: plan.path("daemon-push-stream"), events: true, spacing: 0.2)
        Log.say("    p50 \(Format.ms(streamed.latency.median)), p95 \(Format.ms(streamed.latency.percentile(95)))")
        Log.say("==> the same without it (sync.events: false, sync.interval: \(Self.periodicForBench)s)")
        let periodic = try await editLatency(
            api: api, baseURL: baseURL, directory: plan.path("daemon-push-periodic"), events: false,
            spacing: Double(Self.periodicForBench))
        Log.say("    p50 \(Format.ms(periodic.latency.median)), p95 \(Format.ms(periodic.latency.percentile(95)))")
        let p95 = streamed.latency.percentile(95)
        return [
            ResultRow(
                scenario: "server edit visible in the replica, p50/p95 over \(Self.serverEdits) edits (change stream)",
                measured: "\(Format.ms(streamed.latency.median)) / \(Format.ms(p95))",
                baseline:
                    "without the stream, every \(Self.periodicForBench) s: \(Format.ms(periodic.latency.median)) / \(Format.ms(periodic.latency.percentile(95))) (at the default 15 min: half of it on average)",
                ratio: Format.ratio(periodic.latency.median / streamed.latency.median),
                target: "p95 ≤ 1 s", passed: p95 <= 1000),
            ResultRow(
                scenario: "runs for those \(Self.serverEdits) edits (change stream / periodic)",
                measured: "\(streamed.runs) / \(periodic.runs)", baseline: "—", ratio: "—", target: "—", passed: nil),
            streamed.idle.row(
                "idle CPU over \(plan.idleSeconds) s, change stream open (heartbeat 15 s)", baseline: periodic.idle),
        ]
    }

    struct EditLatency {
        var latency: Samples
        var runs: Int
        var idle: IdleCost
    }

    struct IdleCost {
        var cpuSeconds: Double
        var wakeupsPerSecond: Double
        var seconds: Int

        var share: Double { cpuSeconds / Double(seconds) * 100 }

        func row(_ scenario: String, baseline: IdleCost) -> ResultRow {
            ResultRow(
                scenario: scenario,
                measured: String(
                    format: "%.2f s (%.3f %% of a core), %.1f context switches/s", cpuSeconds, share, wakeupsPerSecond),
                baseline: String(
                    format: "stream off: %.2f s (%.3f %%), %.1f context switches/s", baseline.cpuSeconds,
                    baseline.share,
                    baseline.wakeupsPerSecond),
                ratio: "—", target: "< 0.1 % of a core", passed: share < 0.1)
        }
    }

    /// A daemon on a fresh store; after its first run, `serverEdits` admin edits, each timed from the server's
    /// answer to the moment the replica (read as a shop tool reads it) holds it; then the idle cost.
    func editLatency(api: PlainClient, baseURL: String, directory: String, events: Bool, spacing: Double)
        async throws -> EditLatency
    {
        let daemon = try DaemonProcess(directory: directory, baseURL: baseURL, token: APIServerProcess.token)
        try daemon.writeConfig(
            "log:\n  level: notice", interval: events ? "15m" : "\(Self.periodicForBench)s", pageSize: Self.pageSize,
            events: events)
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        try Self.requireSuccess(try await Self.startAndWaitForFirstRun(daemon).status)
        let wanted = events ? "connected" : "off"
        guard try await daemon.waitForStatus(timeout: 60, { $0["events"]?.stringValue == wanted }) != nil else {
            throw BenchError(
                "the change stream is not \(wanted): \(try await daemon.call("status")["events"] ?? .null)")
        }
        let runsBefore = try await daemon.call("status")["metrics"]?["runs"]?.intValue ?? 0
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        let replica = try DatabaseQueue(path: daemon.storePath, configuration: configuration)
        defer { try? replica.close() }
        var latency = Samples()
        for index in 0..<Self.serverEdits {
            // At a random moment, so that the periodic schedule's phase is not always the same.
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...Int(spacing * 1000))))
            let id = "ord_\(index % 50 + 1)"
            let notes = "bench edit \(index) \(UUID().uuidString.prefix(8))"
            let reply = try await api.send(.PATCH, "/admin/records/orders/\(id)", json: "{\"notes\": \"\(notes)\"}")
            guard reply.status == 200 else { throw BenchError("admin edit answered \(reply.status)") }
            let committed = ContinuousClock.now
            while true {
                let seen = try await replica.read { db in
                    try String.fetchOne(db, sql: "SELECT notes FROM orders WHERE id = ?", arguments: [id])
                }
                if seen == notes { break }
                if ContinuousClock.now - committed > .seconds(120) {
                    throw BenchError("edit \(index) not seen in 120 s")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            latency.append((ContinuousClock.now - committed).seconds * 1000)
        }
        let runs = (try await daemon.call("status")["metrics"]?["runs"]?.intValue ?? 0) - runsBefore
        // Idle: no edits, the daemon back at rest (the stream open when on).
        guard try await daemon.waitForStatus(timeout: 60, { $0["state"]?.stringValue == "idle" }) != nil else {
            throw BenchError("the daemon did not go idle")
        }
        let usage = ProcessStats.Usage(daemon.pid)
        if !events {
            // The idle baseline at the default interval: the shortened one would run every 2 s. A reload (SIGHUP)
            // plans the next periodic run one interval from now.
            try daemon.writeConfig("log:\n  level: notice", interval: "15m", pageSize: Self.pageSize, events: false)
            daemon.process?.signal(SIGHUP)
            try await Task.sleep(for: .seconds(3))
            guard try await daemon.waitForStatus(timeout: 60, { $0["state"]?.stringValue == "idle" }) != nil else {
                throw BenchError("the daemon did not go idle after the reload")
            }
        }
        try await Task.sleep(for: .seconds(plan.idleSeconds))
        let (cpu, switches, _) = usage.spent()
        let wakeups = Double(switches) / Double(plan.idleSeconds)
        if events {
            let state = try await daemon.call("status")["events"]?.stringValue
            guard state == "connected" else {
                throw BenchError("the stream was not open through the idle minute: \(state ?? "nil")")
            }
        }
        await daemon.stop()
        return EditLatency(
            latency: latency, runs: runs,
            idle: IdleCost(cpuSeconds: cpu, wakeupsPerSecond: wakeups, seconds: plan.idleSeconds))
    }
}
