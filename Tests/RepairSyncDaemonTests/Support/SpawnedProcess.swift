import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child started with posix_spawn and reaped with a blocking waitpid on its own thread — for a child that execs
/// another program (systemd-socket-activate), which Foundation's `Process` bookkeeping does not follow well.
final class SpawnedProcess: @unchecked Sendable {
    let pid: pid_t
    /// The child's stdout and stderr.
    let output: FileHandle

    init(_ arguments: [String], environment: [String: String]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        close(fds[1])
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        pid = child
        output = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
    }

    /// Reads the output (on a thread) until a line containing `text`; the lines read so far.
    func readLines(until text: String) async -> [String] {
        let output = output
        return await withCheckedContinuation { continuation in
            Thread {
                var lines: [String] = []
                var current: [UInt8] = []
                while true {
                    let chunk = output.readData(ofLength: 1)
                    guard let byte = chunk.first else { break }
                    if byte == UInt8(ascii: "\n") {
                        lines.append(String(decoding: current, as: UTF8.self))
                        current = []
                        if lines.last!.contains(text) { break }
                    } else {
                        current.append(byte)
                    }
                }
                continuation.resume(returning: lines)
            }.start()
        }
    }

    func signal(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the exit (on a thread); the exit status, or 128 + the signal.
    func waitForExit() async -> Int32 {
        let pid = pid
        return await withCheckedContinuation { continuation in
            Thread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                let signalled = status & 0x7f
                continuation.resume(returning: signalled == 0 ? (status >> 8) & 0xff : 128 + signalled)
            }.start()
        }
    }
}
