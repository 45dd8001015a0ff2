internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncDaemon
internal import RepairSyncModels
internal import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// Scenario 6: bad configuration and bad files. Every configuration key with a value of the wrong type and with a
/// wrong value must stop the daemon with exit 78 and an error naming that key; a missing or unreadable token file
/// likewise; a missing state directory is made; a read-only one is a clear error; a store file full of garbage is
/// kept aside untouched and a fresh replica synced.
public struct BadConfiguration: Sendable {
    public init() {}

    /// A wrong value for each key (the wrong type is `[1, 2]` for every key).
    static let wrongValues: [String: String] = [
        "api.base_url": "ftp://api.example", "api.token_file": "/", "api.allow_insecure_http": "maybe",
        "api.request_timeout": "soon", "api.retry_after_cap": "0s", "api.ca_file": "/nonexistent/ca.pem",
        "api.tls_min_version": "1.0", "api.proxy": "https://proxy.example:3128",
        "store.path": "relative/replica.sqlite",
        "store.group_readable": "maybe", "store.group_writable": "sometimes",
        "store.passcode_key_file": "/nonexistent/passcode.key", "control.socket": "relative.sock",
        "control.group": "no-such-group-here", "control.public_status": "maybe", "control.max_connections": "-1",
        "control.max_connections_per_uid": "0", "control.max_line_bytes": "12", "sync.interval": "0s",
        "sync.page_size": "5000", "sync.shutdown_grace": "soon", "sync.push_debounce": "-1s",
        "sync.events": "sometimes",
        "sync.max_age.clients": "soon", "sync.max_age.orders": "-1s", "sync.max_age.devices": "yesterday",
        "sync.max_age.tickets": "1 fortnight", "sync.max_age.ticket_messages": "-5m", "retry.base": "0s",
        "retry.cap": "never", "retry.max_attempts": "-1", "conflicts.orders": "coin-flip",
        "conflicts.devices": "whoever-shouts", "conflicts.clients": "both", "conflicts.tickets": "neither",
        "probe.mode": "telepathy", "probe.offline_interval": "0s", "probe.online_interval": "soon",
        "probe.debounce": "-1s", "probe.timeout": "0s", "log.level": "loud", "retention.days": "-3",
        "metrics.textfile": "relative.prom", "metrics.listen": "0.0.0.0:9464",
        "priority.orders.status": "urgent", "priority.orders.notes": "low", "priority.orders.create": "first",
        "priority.devices.status": "1", "priority.devices.diagnosis": "top", "priority.devices.resolution": "later",
        "priority.devices.create": "asap", "priority.clients.create": "vip", "priority.ticket_messages.public": "loud",
        "priority.ticket_messages.internal": "quiet",
    ]

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("bad-config") { workspace in
            try await ScenarioReport.measure("bad configuration and files") { report in
                let token = workspace.file("token")
                try "soak-token\n".write(toFile: token, atomically: true, encoding: .utf8)
                chmod(token, 0o600)
                let base: [String: String] = [
                    "api.base_url": "http://127.0.0.1:9", "api.token_file": token,
                    "store.path": workspace.file("state/replica.sqlite"),
                    "control.socket": workspace.file("run/control.sock"),
                ]
                func check(_ key: String, _ value: String) async throws -> Bool {
                    var values = base
                    values[key] = value
                    let path = workspace.file("config.yaml")
                    try Self.yaml(values).write(toFile: path, atomically: true, encoding: .utf8)
                    let (status, output) = try await Self.runDaemon(["--check-config", "--config", path], workspace)
                    let ok = status == 78 && output.contains(key)
                    if !ok, report.notes.count < 12 {
                        report.notes.append("\(key) = \(value): exit \(status): \(output.prefix(200))")
                    }
                    return ok
                }
                let keys = ConfigurationLoader.keys.map(\.key)
                var wrongType = 0
                var wrongValue = 0
                for key in keys {
                    if try await check(key, "[1, 2]") { wrongType += 1 }
                    if let value = Self.wrongValues[key], try await check(key, value) { wrongValue += 1 }
                }
                report.add(.count("keys with a wrong type → exit 78 naming the key", wrongType, mustBe: keys.count))
                report.add(.count("keys with a wrong value → exit 78 naming the key", wrongValue, mustBe: keys.count))

                // Token file missing, or not a readable file.
                try FileManager.default.removeItem(atPath: token)
                let missing = try await check("api.token_file", token)
                try FileManager.default.createDirectory(atPath: token, withIntermediateDirectories: true)
                let directory = try await check("api.token_file", token)
                try FileManager.default.removeItem(atPath: token)
                try "soak-token\n".write(toFile: token, atomically: true, encoding: .utf8)
                chmod(token, 0o600)
                report.add(
                    .check("missing or unreadable token file → exit 78 naming api.token_file", missing && directory))

                try await filesAndStore(workspace, &report)
            }
        }
    }

    /// The state directory missing or read-only, and a store full of garbage, against a real server.
    func filesAndStore(_ workspace: Workspace, _ report: inout ScenarioReport) async throws {
        let server = try await APIServerProcess(
            database: workspace.file("api.sqlite"), orders: 30, logPath: workspace.file("api.log"))
        defer { server.process.signal(SIGKILL) }
        let daemon = try DaemonProcess(
            directory: workspace.file("daemon"), baseURL: server.baseURL, token: APIServerProcess.token,
            extraConfig: "probe:\n  mode: poll")
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        // Missing: made (0700), and the daemon starts.
        let stateDirectory = (daemon.storePath as NSString).deletingLastPathComponent
        try? FileManager.default.removeItem(atPath: stateDirectory)
        try await daemon.start()
        _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
        await daemon.stop()
        report.add(
            .check(
                "missing state directory → made, the daemon starts",
                FileManager.default.fileExists(atPath: daemon.storePath)))

        // Read-only: a read-only tmpfs over the state directory (root only).
        if getuid() == 0, await Mounts.tmpfs(at: stateDirectory, options: "ro,size=1m") {
            let (status, output) = try await Self.runDaemon(["--config", daemon.configPath], workspace)
            await Mounts.unmount(stateDirectory)
            let clear = status != 0 && output.contains(daemon.storePath) && output.lowercased().contains("read-only")
            report.add(
                .check(
                    "read-only state directory → exits with an error naming the store", clear,
                    clear ? "exit \(status)" : "exit \(status): \(output.suffix(200))"))
        } else {
            report.notes.append("read-only state directory: skipped (needs root to mount a read-only tmpfs)")
        }

        // Garbage: kept aside byte for byte, a fresh replica synced.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: daemon.storePath + suffix) }
        var random = SplitMix64(seed: 99)
        let garbage = Data((0..<65536).map { _ in UInt8.random(in: 0...255, using: &random) })
        try garbage.write(to: URL(fileURLWithPath: daemon.storePath))
        try await daemon.start()
        _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
        let records = try await daemon.call("status")["collections"]
        await daemon.stop()
        let kept = try FileManager.default.contentsOfDirectory(atPath: stateDirectory).filter {
            $0.contains(".corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
        }
        let keptBytes = kept.first.flatMap { FileManager.default.contents(atPath: stateDirectory + "/" + $0) }
        report.add(.check("garbage store → kept aside unchanged", keptBytes == garbage, kept.first ?? "nothing kept"))
        report.add(.check("…the log says where", daemon.log().contains("kept aside")))
        let synced = (try? StoreInspector.integrityCheck(daemon.storePath)) == "ok" && records != nil
        report.add(.check("…and a fresh replica is synced", synced))
        await server.stop()
    }

    /// Nested YAML from dotted keys.
    static func yaml(_ values: [String: String]) -> String {
        var lines: [String] = []
        var written: [String] = []
        for key in values.keys.sorted() {
            let parts = key.split(separator: ".").map(String.init)
            for depth in 0..<(parts.count - 1) where written.count <= depth || written[depth] != parts[depth] {
                written = Array(written.prefix(depth)) + [parts[depth]]
                lines.append(String(repeating: "  ", count: depth) + parts[depth] + ":")
            }
            written = Array(parts.dropLast())
            lines.append(String(repeating: "  ", count: parts.count - 1) + parts.last! + ": " + values[key]!)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func runDaemon(_ arguments: [String], _ workspace: Workspace) async throws -> (Int32, String) {
        let log = workspace.file("run-\(UUID().uuidString.prefix(8)).log")
        let child = try ChildProcess(
            [Binaries.path("repairsyncd")] + arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REPAIRSYNCD_") },
            logPath: log)
        let status = await child.waitForExit(timeout: 60) ?? -1
        return (status, child.log())
    }
}
