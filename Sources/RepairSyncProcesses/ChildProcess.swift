public import Foundation

#if canImport(Glibc)
    internal import Glibc
#endif

/// A child process started with posix_spawn, its standard error (and standard output unless piped) appended to a
/// log file, reaped by a blocking waitpid on its own thread. Used for `repairsyncd` and `repair-api-dev`, which
/// the scenarios kill with SIGKILL and start again, for the simulator's child that kills itself mid-sync, and for
/// the tests that run a binary — never Foundation's `Process` (see `Package.swift`).
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let logPath: String
    /// The child's standard output, when asked for as a pipe.
    public let output: FileHandle?
    private let exit = NSCondition()
    /// Held while a child is spawned (see `init`).
    private static let spawning = NSLock()
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Glibc's Swift module does not
    /// declare; nil where the C library has none.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast(
                $0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }
    private var exitStatus: Int32?

    /// Starts `arguments[0]` (an absolute path) with `arguments` and `environment`. With `pipeOutput`, standard
    /// output is a pipe to read (`readLine`), and with `mergeErrors` standard error goes into that pipe too.
    public init(
        _ arguments: [String], environment: [String: String], logPath: String, pipeOutput: Bool = false,
        mergeErrors: Bool = false
    ) throws {
        self.logPath = logPath
        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard log >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(log) }
        // posix_spawn closes nothing: a child inherits every descriptor not marked close-on-exec — a pipe another
        // child's reader waits on (it would not see that output end until this child exits), the test runner's own
        // pipes. So the child closes everything above 2 before it runs (as Foundation's `Process` does), and the pipe
        // is marked close-on-exec (Glibc's module has no pipe2) and its write end closed here while no other
        // ChildProcess spawns, in case closing is not available; the dup2 onto 1 and 2 clears the flag on the
        // child's own copies.
        Self.spawning.lock()
        defer { Self.spawning.unlock() }
        var fds: [Int32] = [-1, -1]
        if pipeOutput {
            guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeOutput ? fds[1] : log, 1)
        posix_spawn_file_actions_adddup2(&actions, pipeOutput && mergeErrors ? fds[1] : log, 2)
        if pipeOutput { posix_spawn_file_actions_addclose(&actions, fds[0]) }
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        if pipeOutput { close(fds[1]) }
        guard result == 0 else {
            if pipeOutput { close(fds[0]) }
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL)
        }
        pid = child
        output = pipeOutput ? FileHandle(fileDescriptor: fds[0], closeOnDealloc: true) : nil
        let spawned = child
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0, errno == EINTR {}
            let signalled = status & 0x7f
            exit.lock()
            exitStatus = signalled == 0 ? (status >> 8) & 0xff : 128 + signalled
            exit.broadcast()
            exit.unlock()
        }.start()
    }

    /// Runs `arguments` (`arguments[0]` an absolute path) to its end: its exit status (or 128 + the signal) and
    /// what it wrote to standard output (and standard error too with `mergeErrors`; otherwise that goes to
    /// `logPath`). Bounded: a child still running after `timeout` seconds is killed and the call throws — once its
    /// output ends, which a process it started and that still holds the output open can delay.
    public static func run(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        mergeErrors: Bool = false, logPath: String = "/dev/null", timeout: TimeInterval = 120
    ) async throws -> (status: Int32, output: String) {
        let child = try ChildProcess(
            arguments, environment: environment, logPath: logPath, pipeOutput: true, mergeErrors: mergeErrors)
        // Read while waiting: a child that fills the pipe must not wait for a reader that waits for its exit.
        async let output = child.readToEnd()
        guard let status = await child.waitForExit(timeout: timeout) else {
            await child.killNow()
            _ = await output
            throw TimedOut(command: arguments.joined(separator: " "), seconds: timeout)
        }
        return (status, String(decoding: await output, as: UTF8.self))
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public var command: String
        public var seconds: TimeInterval
        public var description: String { "\(command) did not end within \(Int(seconds)) s (killed)" }
    }

    /// Reads standard output (piped) to its end, on a thread.
    public func readToEnd() async -> Data {
        guard let output else { return Data() }
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: output.readDataToEndOfFile()) }.start()
        }
    }

    /// The exit status (or 128 + the signal) once the child has exited; nil while it runs.
    public var status: Int32? {
        exit.lock()
        defer { exit.unlock() }
        return exitStatus
    }

    public var isRunning: Bool { status == nil }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits for the exit (on a thread, at most `timeout`); the status, or nil if it still runs.
    @discardableResult
    public func waitForExit(timeout: TimeInterval = 60) async -> Int32? {
        await withCheckedContinuation { continuation in
            Thread { [self] in
                exit.lock()
                let deadline = Date().addingTimeInterval(timeout)
                while exitStatus == nil, exit.wait(until: deadline) {}
                let status = exitStatus
                exit.unlock()
                continuation.resume(returning: status)
            }.start()
        }
    }

    /// SIGKILL, then wait for the exit.
    public func killNow() async {
        signal(SIGKILL)
        await waitForExit()
    }

    /// Reads standard output (piped) until a line starting with `prefix`; that line, or nil at its end.
    public func readLine(startingWith prefix: String) async -> String? {
        await readLines(until: { $0.hasPrefix(prefix) }).last.flatMap { $0.hasPrefix(prefix) ? $0 : nil }
    }

    /// Reads standard output (piped) up to and including the first line that `matches`; the lines read (the last
    /// one not matching when the output ended first).
    public func readLines(until matches: @escaping @Sendable (String) -> Bool) async -> [String] {
        guard let output else { return [] }
        return await withCheckedContinuation { continuation in
            Thread {
                var lines: [String] = []
                var current: [UInt8] = []
                while true {
                    let chunk = output.readData(ofLength: 1)
                    guard let byte = chunk.first else { break }
                    if byte != UInt8(ascii: "\n") {
                        current.append(byte)
                        continue
                    }
                    lines.append(String(decoding: current, as: UTF8.self))
                    current = []
                    if matches(lines[lines.count - 1]) { break }
                }
                continuation.resume(returning: lines)
            }.start()
        }
    }

    /// The log so far.
    public func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
