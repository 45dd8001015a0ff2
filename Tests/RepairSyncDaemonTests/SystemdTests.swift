import BackendTestSupport
import Foundation
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// systemd integration without systemd running: sd_notify messages on a test NOTIFY_SOCKET, socket activation
/// through `systemd-socket-activate`.
@Suite("systemd integration", .serialized, .timeLimit(.minutes(2)))
struct SystemdTests {
    @Test("READY=1, then STATUS= with the pending count, WATCHDOG=1 at half of WATCHDOG_USEC, STOPPING=1 on SIGTERM")
    func notifications() async throws {
        try await DaemonHarness.with { h in
            h.environment = ["WATCHDOG_USEC": "400000"]
            try await h.start()
            let watchdog = await h.notify.waitForLine(startingWith: "WATCHDOG=1", timeout: 10)
            #expect(watchdog != nil, "\(h.notify.received)")
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            _ = try await h.call("updateOrder", .object(["id": .string("ord_1"), "notes": .string("status line")]))
            let status = await h.notify.waitForLine(startingWith: "STATUS=idle (paused) · 1 pending", timeout: 10)
            #expect(status != nil, "\(h.notify.received)")
            #expect(status?.contains("last sync") == true)
            h.kill(SIGTERM)
            #expect(await h.notify.wait(for: "STOPPING=1", timeout: 10))
            #expect(await h.waitForExit() == 0)
        }
    }

    @Test("socket activation: systemd-socket-activate holds the socket, the first connection starts the daemon on it")
    func socketActivation() async throws {
        let activator = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activator) else {
            print("skipping socket activation: \(activator) is missing (package systemd)")
            try Test.cancel("systemd-socket-activate is not installed")
        }
        try await DaemonHarness.with { h in
            try FileManager.default.createDirectory(
                atPath: (h.socketPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            var environment = ProcessInfo.processInfo.environment
            environment["NOTIFY_SOCKET"] = h.notify.path
            environment.removeValue(forKey: "JOURNAL_STREAM")
            // posix_spawn, not Foundation's Process, which stops reaping other children once a child execs another
            // program (as systemd-socket-activate does).
            let activated = try ChildProcess(
                [
                    activator, "-l", h.socketPath, "--fdname=control", "-E", "NOTIFY_SOCKET=\(h.notify.path)",
                    DaemonHarness.binaries.appendingPathComponent("repairsyncd").path, "--config", h.configPath,
                ], environment: environment, logPath: h.directory.path("activated.log"), pipeOutput: true,
                mergeErrors: true)
            defer { activated.signal(SIGKILL) }
            // systemd-socket-activate says when the socket is made; the daemon is not running until someone connects.
            let listening = await activated.readLines(until: { $0.contains("Listening on") })
            #expect(listening.last?.contains(h.socketPath) == true, "\(listening)")
            #expect(h.notify.received.isEmpty, "nothing started before the first connection")
            let status = try await h.repairctl(["status", "--json"])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(status.stdout.contains("\"state\""))
            #expect(await h.notify.wait(for: "READY=1", timeout: 10))
            let log = await activated.readLines(until: { $0.contains("socket activation") })
            #expect(log.last?.contains("socket activation") == true, "\(log)")
            activated.signal(SIGTERM)
            #expect(await activated.waitForExit() == 0)
            #expect(
                FileManager.default.fileExists(atPath: h.socketPath), "the inherited socket file is systemd's to remove"
            )
        }
    }
}
