public import Foundation
internal import RepairSyncControlClient
public import RepairSyncProtocol

/// The built `repairsyncd` as a separate process, with its configuration, store and control socket in a scenario's
/// directory; readiness is its own sd_notify READY=1 on a private NOTIFY_SOCKET. It can be killed and started again
/// on the same store as many times as a scenario wants.
public final class DaemonProcess: @unchecked Sendable {
    public let directory: String
    public let baseURL: String
    public let notify: NotifyListener
    /// `REPAIRSYNCD_*` overrides and anything else the daemon's environment should hold.
    public var environment: [String: String] = [:]
    /// A command prefix (e.g. `faketime` for clock jumps).
    public var launcher: [String] = []
    /// The daemon's executable (the one just built, unless a test runs another, e.g. a packaged one).
    public var binary = Binaries.path("repairsyncd")
    public private(set) var process: ChildProcess?
    public private(set) var starts = 0

    public var configPath: String { directory + "/repairsyncd.yaml" }
    public var socketPath: String { directory + "/run/control.sock" }
    public var storePath: String { directory + "/state/replica.sqlite" }
    public var tokenPath: String { directory + "/token" }
    public var logPath: String { directory + "/daemon.log" }
    /// The running daemon's pid (-1 before a start).
    public var pid: Int32 { process?.pid ?? -1 }

    /// Prepares the directory, the token file and a configuration with `extra` YAML appended.
    public init(directory: String, baseURL: String, token: String, extraConfig: String = "") throws {
        self.directory = directory
        self.baseURL = baseURL
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        notify = try NotifyListener(path: directory + "/notify.sock")
        try token.write(toFile: tokenPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokenPath)
        try writeConfig(extraConfig)
    }

    /// The configuration file: the server, the scenario's paths, and `extra` YAML (whole sections).
    /// The server's change stream (`sync.events`) is off unless `events`: the scenarios count requests and
    /// Retry-After violations of the engine, and predate the stream.
    public func writeConfig(_ extra: String = "", interval: String = "15m", pageSize: Int = 100, events: Bool = false)
        throws
    {
        let text = """
            api:
              base_url: \(baseURL)
              token_file: \(tokenPath)
            store:
              path: \(storePath)
            control:
              socket: \(socketPath)
            sync:
              interval: \(interval)
              page_size: \(pageSize)
              events: \(events)
            \(extra)
            """
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts the daemon and waits for READY=1 (a start that exits first throws, with the end of its log).
    public func start(timeout: TimeInterval = 60) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        environment.removeValue(forKey: "JOURNAL_STREAM")
        environment.merge(self.environment) { _, new in new }
        starts += 1
        let child = try ChildProcess(
            launcher + [binary, "--config", configPath], environment: environment, logPath: logPath)
        process = child
        // READY=1, or the end of a daemon that could not start (checked between short waits for the datagram).
        let deadline = Date().addingTimeInterval(timeout)
        var ready = false
        while !ready, child.isRunning, Date() < deadline { ready = await notify.wait(for: "READY=1", timeout: 0.25) }
        if !ready { ready = await notify.wait(for: "READY=1", timeout: 0) }
        guard ready else {
            await child.killNow()
            throw ScenarioFailure("repairsyncd did not become ready (start \(starts)): \(child.log().suffix(800))")
        }
    }

    /// SIGKILL and wait: a power cut as far as the daemon can tell.
    public func kill() async { await process?.killNow() }

    /// SIGTERM and wait for the exit; its status.
    @discardableResult
    public func stop() async -> Int32? {
        guard let process else { return nil }
        process.signal(SIGTERM)
        return await process.waitForExit()
    }

    /// One JSON-RPC call on its own connection, on a thread (never on the caller's executor). Bounded: a reply that
    /// does not come within `timeout` seconds is an error that names the call (a stalled scenario says where).
    public func call(_ method: String, _ params: JSONValue? = nil, timeout: Int = 240) async throws -> JSONValue {
        let path = socketPath
        return try await Blocking.run {
            let client = try ControlClient(path: path)
            client.setReplyTimeout(seconds: timeout)
            return try client.call(method, params)
        }
    }

    /// Waits until the status matches `condition`, driven by the daemon's own `statusChanged` notifications (no
    /// polling); the matching status, or nil after `timeout`.
    public func waitForStatus(
        timeout: TimeInterval = 120, _ condition: @escaping @Sendable (JSONValue) -> Bool
    ) async throws -> JSONValue? {
        let watcher = try StatusWatcher(path: socketPath)
        defer { watcher.stop() }
        guard let index = await watcher.wait(timeout: timeout, for: condition) else { return nil }
        return watcher.statuses[index]
    }

    public func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Nothing left to push and no run in progress.
    @Sendable public static func drained(_ status: JSONValue) -> Bool {
        status["pending"]?.intValue == 0 && status["failed"]?.intValue == 0
            && ["idle", "completed"].contains(status["state"]?.stringValue ?? "")
    }
}
