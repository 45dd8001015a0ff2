internal import Foundation

/// Small tmpfs mounts for the scenarios that need a full or read-only filesystem (root only).
enum Mounts {
    /// Mounts a tmpfs with `options` on `path`; true when it worked.
    static func tmpfs(at path: String, options: String) async -> Bool {
        await run(["/bin/mount", "-t", "tmpfs", "-o", options, "tmpfs", path])
    }

    static func unmount(_ path: String) async { _ = await run(["/bin/umount", path]) }

    /// A lazy unmount that does not wait (for cleanup after a failure, when the daemon may still hold files).
    static func detach(_ path: String) {
        _ = try? ChildProcess(["/bin/umount", "-l", path], environment: [:], logPath: "/dev/null")
    }

    private static func run(_ command: [String]) async -> Bool {
        guard let child = try? ChildProcess(command, environment: [:], logPath: "/dev/null") else { return false }
        return await child.waitForExit(timeout: 30) == 0
    }
}
