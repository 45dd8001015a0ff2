import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a program with posix_spawn, output to /dev/null, and waits for it: the cost of running a command as a
/// status bar does, process start included.
enum Spawn {
    /// Wall time in milliseconds of running `arguments` to completion; throws if it does not exit 0.
    static func time(_ arguments: [String], environment: [String: String] = [:]) throws -> Double {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else {
            throw BenchError("cannot start \(arguments[0]): \(String(cString: strerror(result)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let elapsed = ContinuousClock.now - start
        guard status == 0 else { throw BenchError("\(arguments.joined(separator: " ")) exited with status \(status)") }
        return elapsed.milliseconds
    }
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }

    var seconds: Double { milliseconds / 1000 }
}
