import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIDev
import RepairSyncControlClient
import RepairSyncProcesses
import RepairSyncProtocol
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `repairsyncd` as a separate process against a real `repair-api-dev` on loopback, with its own
/// configuration, store and control socket in a temporary directory; readiness is its sd_notify READY=1.
final class DaemonHarness: @unchecked Sendable {
    private let inProcessBackend: RunningBackend?
    /// The in-process backend (tests that start the daemon against a server process use `baseURL` only).
    var backend: RunningBackend { inProcessBackend! }
    let baseURL: String
    /// A command prefix for the daemon, e.g. `ip netns exec NAME`.
    var launcher: [String] = []
    /// Extra environment for the daemon (`REPAIRSYNCD_*` overrides).
    var environment: [String: String] = [:]
    let directory: TemporaryDirectory
    let notify: NotifyListener
    private(set) var process: ChildProcess?
    private var runs = 0

    var configPath: String { directory.path("repairsyncd.yaml") }
    var socketPath: String { directory.path("run/control.sock") }
    var storePath: String { directory.path("state/replica.sqlite") }
    var logPath: String { directory.path("daemon-\(runs).log") }

    static var binaries: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }

    init(backend: RunningBackend) throws {
        inProcessBackend = backend
        baseURL = backend.baseURL
        directory = try TemporaryDirectory(prefix: "daemon")
        notify = try NotifyListener(path: directory.path("notify.sock"))
        try Self.writeToken(at: directory.path("token"))
        try writeConfig()
    }

    /// A harness for a server started elsewhere (a process, maybe in another network namespace).
    init(baseURL: String) throws {
        inProcessBackend = nil
        self.baseURL = baseURL
        directory = try TemporaryDirectory(prefix: "daemon")
        notify = try NotifyListener(path: directory.path("notify.sock"))
        try Self.writeToken(at: directory.path("token"))
        try writeConfig()
    }

    /// The configuration file: the backend, the temporary paths, and `extra` YAML lines (`api` lines more keys of
    /// the api section, e.g. `ca_file: PATH`).
    /// The server's change stream is off unless `events` (the tests of exact run sequences and golden outputs
    /// predate it; ServerPush/ tests it).
    func writeConfig(_ extra: String = "", api: [String] = [], events: Bool = false) throws {
        let text = """
            api:
              base_url: \(baseURL)
              token_file: \(directory.path("token"))
            \(api.map { "  " + $0 }.joined(separator: "\n"))
            store:
              path: \(storePath)
            control:
              socket: \(socketPath)
            sync:
              interval: 15m
              page_size: 100
              events: \(events)
            \(extra)
            """
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// The token file as an admin would make it: private to the daemon's user.
    static func writeToken(at path: String) throws {
        try RunningBackend.token.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    /// Runs `body` with a backend seeded with `orders` orders and a harness; stops everything afterwards.
    static func with<T: Sendable>(orders: Int = 30, _ body: @Sendable (DaemonHarness) async throws -> T) async throws
        -> T
    {
        try await RunningBackend.with(seed: SeedOptions(orders: orders)) { backend in
            let harness = try DaemonHarness(backend: backend)
            defer {
                harness.kill(SIGKILL)
                harness.notify.close()
            }
            return try await body(harness)
        }
    }

    /// Starts the daemon and waits for READY=1.
    func start() async throws {
        let binary = Self.binaries.appendingPathComponent("repairsyncd")
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        environment.removeValue(forKey: "JOURNAL_STREAM")
        environment.merge(self.environment) { _, new in new }
        runs += 1
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = try ChildProcess(
            launcher + [binary.path, "--config", configPath], environment: environment, logPath: logPath)
        let ready = await notify.wait(for: "READY=1")
        try #require(ready, "the daemon did not become ready: \(log())")
    }

    /// Sends a signal to the running daemon.
    func kill(_ signal: Int32) {
        process?.signal(signal)
    }

    /// Waits for the daemon to exit (at most two minutes); its exit status (128 + the signal when one ended it), or
    /// -1 when it was never started or still runs.
    func waitForExit() async -> Int32 {
        await process?.waitForExit(timeout: 120) ?? -1
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// A blocking JSON-RPC call on its own thread (never on the test's executor).
    func call(_ method: String, _ params: JSONValue? = nil) async throws -> JSONValue {
        let path = socketPath
        return try await Self.blocking {
            let client = try ControlClient(path: path)
            return try client.call(method, params)
        }
    }

    /// Sends raw lines on one connection and reads `replies` lines back.
    func raw(_ lines: [String], replies: Int) async throws -> [String] {
        let path = socketPath
        return try await Self.blocking { try RawSocket(path: path).exchange(lines, replies: replies) }
    }

    static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// Runs the built `repairctl` with the daemon's socket.
    func repairctl(_ arguments: [String], asUID uid: UInt32? = nil, gid: UInt32? = nil) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        let binary = Self.binaries.appendingPathComponent("repairctl")
        // Another user: setpriv drops to the uid, its own group (or `gid`), and no supplementary groups.
        let command =
            uid.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\(gid ?? $0)", "--clear-groups"] } ?? []
        var environment = ProcessInfo.processInfo.environment
        environment["REPAIRSYNCD_SOCKET"] = socketPath
        let errors = directory.path("repairctl-\(UUID().uuidString.prefix(8)).err")
        let (status, stdout) = try await ChildProcess.run(
            command + [binary.path] + arguments, environment: environment, logPath: errors)
        return (status, stdout, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    /// Runs the built `repairsyncd` with arguments (for --check-config and bad configurations).
    static func runDaemonBinary(_ arguments: [String]) async throws -> (status: Int32, stderr: String, stdout: String) {
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent(
            "repairsyncd-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: errors) }
        let (status, stdout) = try await ChildProcess.run(
            [binaries.appendingPathComponent("repairsyncd").path] + arguments, logPath: errors.path)
        return (status, (try? String(contentsOf: errors, encoding: .utf8)) ?? "", stdout)
    }
}

/// A plain blocking Unix-socket connection for raw protocol lines.
struct RawSocket {
    let descriptor: Int32

    init(path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor
        guard UnixSocketAddress.with(path, { connect(descriptor, $0, $1) }) == 0 else {
            throw POSIXError(.ECONNREFUSED)
        }
    }

    func exchange(_ lines: [String], replies: Int) throws -> [String] {
        try exchange(bytes: lines.map { Array(($0 + "\n").utf8) }, replies: replies)
    }

    /// Sends raw byte lines (each with its own newline if it has one) and reads `replies` lines back.
    func exchange(bytes lines: [[UInt8]], replies: Int) throws -> [String] {
        defer { close(descriptor) }
        for bytes in lines {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { throw POSIXError(.EPIPE) }
                sent += count
            }
        }
        var received: [UInt8] = []
        var result: [String] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while result.count < replies {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                result.append(String(decoding: received[..<newline], as: UTF8.self))
                received.removeSubrange(...newline)
                continue
            }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            received += chunk[..<count]
        }
        return result
    }
}
