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
            // A clean stop leaves the whole replica in its file: no WAL beside it (a copy after `systemctl stop`
            // holds everything).
            #expect(!FileManager.default.fileExists(atPath: h.storePath + "-wal"), "\(h.log().suffix(1500))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: h.storePath)).count > 100_000)
        }
    }

    @Test("socket activation: systemd-socket-activate holds the socket, the first connection starts the daemon on it")
    func socketActivation() async throws {
        try Self.requireActivator("socket activation")
        try await DaemonHarness.with { h in
            let activated = try Self.activate(h)
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

    @Test(
        "socket activation without control.group: the socket file's group (the unit's SocketGroup=) may read records and queue changes, other users the status only"
    )
    func socketActivationTrustsTheSocketsGroup() async throws {
        try Self.requireActivator("the socket's group")
        guard getuid() == 0 else {
            print("skipping the socket's group: giving the socket another group and calling as another user needs root")
            try Test.cancel("needs root")
        }
        // The shop's group, as systemd's SocketGroup=repair gives it to the socket: not the daemon's own group.
        let shopGroup: gid_t = 4242
        try await DaemonHarness.with { h in
            let activated = try Self.activate(h)
            defer { activated.signal(SIGKILL) }
            _ = await activated.readLines(until: { $0.contains("Listening on") })
            // What systemd does with SocketGroup=, before the daemon starts; mode 0666 (SocketMode=0666, a status bar
            // for every user) so that a user outside the group connects too and is refused the records.
            #expect(chown(h.socketPath, 0, shopGroup) == 0 && chmod(h.socketPath, 0o666) == 0)
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            let member = try await h.repairctl(["orders", "--json"], asUID: 65534, gid: shopGroup)
            #expect(member.status == 0, "a member of the socket's group may read the records: \(member.stderr)")
            #expect(member.stdout.contains("ord_1"))
            let queued = try await h.repairctl(["queue", "order-updated", "ord_1"], asUID: 65534, gid: shopGroup)
            #expect(queued.status == 0, "\(queued.stderr)")
            let other = try await h.repairctl(["orders"], asUID: 65534, gid: 4243)
            #expect(other.status == 1 && other.stderr.contains("may read the status only"), "\(other)")
            activated.signal(SIGTERM)
            #expect(await activated.waitForExit() == 0)
        }
    }

    static let activator = "/usr/bin/systemd-socket-activate"

    /// Skips the test, saying why, without systemd-socket-activate.
    static func requireActivator(_ purpose: String) throws {
        guard FileManager.default.isExecutableFile(atPath: activator) else {
            print("skipping \(purpose): \(activator) is missing (package systemd)")
            try Test.cancel("systemd-socket-activate is not installed")
        }
    }

    /// systemd-socket-activate holding the harness's socket, to start the daemon on the first connection.
    /// posix_spawn, not Foundation's Process, which stops reaping other children once a child execs another program
    /// (as systemd-socket-activate does).
    static func activate(_ h: DaemonHarness) throws -> ChildProcess {
        try FileManager.default.createDirectory(
            atPath: (h.socketPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = h.notify.path
        environment.removeValue(forKey: "JOURNAL_STREAM")
        return try ChildProcess(
            [
                activator, "-l", h.socketPath, "--fdname=control", "-E", "NOTIFY_SOCKET=\(h.notify.path)",
                DaemonHarness.binaries.appendingPathComponent("repairsyncd").path, "--config", h.configPath,
            ], environment: environment, logPath: h.directory.path("activated.log"), pipeOutput: true,
            mergeErrors: true)
    }
}
