internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncModels
internal import RepairSyncProtocol

/// What most scenarios run against: `repair-api-dev` seeded with `orders` orders and `repairsyncd` configured for
/// it (with `config`: YAML sections other than api, store, control and sync), both in the scenario's workspace and both killed when `body` ends,
/// however it ends. The daemon is not started: a scenario may change its configuration or environment first.
enum ScenarioStack {
    static func with<T>(
        _ workspace: Workspace, orders: Int, config: String = "probe:\n  mode: poll", pageSize: Int = 100,
        _ body: (APIServerProcess, DaemonProcess) async throws -> T
    ) async throws -> T {
        let server = try await APIServerProcess(
            database: workspace.file("api.sqlite"), orders: orders, logPath: workspace.file("api.log"))
        defer { server.process.signal(SIGKILL) }
        let daemon = try DaemonProcess(
            directory: workspace.file("daemon"), baseURL: server.baseURL, token: APIServerProcess.token)
        try daemon.writeConfig(config, pageSize: pageSize)
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        return try await body(server, daemon)
    }
}

/// SIGKILLs at random points of a daemon's work: each time after a random number (1…`gap`) of statuses showing
/// progress plus a random 0–4 ms — so a kill lands before a request, while the server handles it, or between its
/// answer and the local commit — then the daemon is started again. Stops early once `finished` is seen.
struct RandomKills {
    var kills: Int
    var gap: Int
    var random: SplitMix64

    /// The number of kills made; `afterKill` runs while the daemon is down.
    mutating func run(
        _ daemon: DaemonProcess, progress: @escaping @Sendable (JSONValue) -> Bool,
        finished: @escaping @Sendable (JSONValue) -> Bool, afterKill: () async throws -> Void
    ) async throws -> Int {
        var killed = 0
        while killed < kills {
            let watcher = try StatusWatcher(path: daemon.socketPath)
            var seen = -1
            for _ in 0..<Int.random(in: 1...max(1, gap), using: &random) {
                guard let index = await watcher.wait(after: seen, timeout: 120, for: { progress($0) || finished($0) })
                else {
                    throw ScenarioFailure("no progress within 120 s: \(daemon.log().suffix(600))")
                }
                seen = index
                if finished(watcher.statuses[index]) { return killed }
            }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...4000, using: &random)))
            await daemon.kill()
            killed += 1
            try await afterKill()
            try await daemon.start()
        }
        return killed
    }
}
