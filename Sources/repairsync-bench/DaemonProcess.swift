import Foundation
import RepairSyncControl

#if canImport(Glibc)
    import Glibc
#endif

/// `repairsyncd` as a process with its own configuration, token, store and control socket in `directory`: what
/// scripts/demo and the end-to-end tests run, with the default sync settings.
final class DaemonProcess {
    let directory: String
    let process: Process
    /// When the process was started (for the initial sync's wall time).
    let started: ContinuousClock.Instant

    var socketPath: String { (directory as NSString).appendingPathComponent("run/control.sock") }
    var storePath: String { Self.storePath(in: directory) }
    var pid: Int32 { process.processIdentifier }

    static func storePath(in directory: String) -> String {
        (directory as NSString).appendingPathComponent("state/replica.sqlite")
    }

    /// Writes the configuration (unless it is there: a restart keeps the store) and starts the daemon.
    init(binary: URL, directory: String, baseURL: String) throws {
        self.directory = directory
        let config = (directory as NSString).appendingPathComponent("repairsyncd.yaml")
        let token = (directory as NSString).appendingPathComponent("token")
        if !FileManager.default.fileExists(atPath: config) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try (BackendProcess.token + "\n").write(toFile: token, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: token)
            let text = """
                api:
                  base_url: \(baseURL)
                  token_file: \(token)
                store:
                  path: \(Self.storePath(in: directory))
                control:
                  socket: \((directory as NSString).appendingPathComponent("run/control.sock"))
                log:
                  level: notice

                """
            try text.write(toFile: config, atomically: true, encoding: .utf8)
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--config", config]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        environment.removeValue(forKey: "JOURNAL_STREAM")
        environment.removeValue(forKey: "WATCHDOG_USEC")
        process.environment = environment
        let log = (directory as NSString).appendingPathComponent("daemon.log")
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        started = .now
        try process.run()
        self.process = process
    }

    /// A new connection to the control socket, once the daemon answers `ping`.
    func connect(timeout: Duration = .seconds(60)) throws -> ControlClient {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let client = try? ControlClient(path: socketPath), (try? client.call("ping")) != nil { return client }
            guard process.isRunning else { throw BenchError("repairsyncd exited: \(log().suffix(2000))") }
            guard ContinuousClock.now < deadline else { throw BenchError("repairsyncd did not answer within \(timeout)") }
            usleep(10_000)
        }
    }

    /// Polls `status` until `metrics.runs` reaches `runs`; returns the status then.
    func waitForRuns(_ runs: Int, client: ControlClient, timeout: Duration = .seconds(900)) throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = try client.call("status")
            if let done = status["metrics"]?["runs"]?.intValue, done >= runs { return status }
            guard process.isRunning else { throw BenchError("repairsyncd exited: \(log().suffix(2000))") }
            guard ContinuousClock.now < deadline else { throw BenchError("no sync run finished within \(timeout)") }
            usleep(20_000)
        }
    }

    func log() -> String {
        BackendProcess.text((directory as NSString).appendingPathComponent("daemon.log"))
    }

    /// SIGTERM, then waits for the exit.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}
