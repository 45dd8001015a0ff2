import BackendTestSupport
import Foundation
import RepairSyncControlClient
import RepairSyncProcesses
import RepairSyncProtocol
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The connectivity probe for real: a server that goes away and comes back (poll mode), and a network link taken
/// down and up inside network namespaces (netlink mode).
@Suite("Connectivity", .serialized, .timeLimit(.minutes(2)))
struct ConnectivityTests {
    static func seedArguments(_ db: String) -> [String] {
        ["--seed", "--orders", "20", "--db", db, "--token", RunningBackend.token, "--admin", "--quiet"]
    }

    @Test(
        "poll mode: a stopped server makes the daemon offline within an interval; nothing is attempted meanwhile; back, the change is pushed"
    )
    func pollMode() async throws {
        let data = try TemporaryDirectory(prefix: "server")
        let db = data.path("api.sqlite")
        let server = try await ServerProcess(arguments: Self.seedArguments(db) + ["--port", "0"])
        let h = try DaemonHarness(baseURL: server.baseURL)
        defer {
            h.kill(SIGKILL)
            h.notify.close()
        }
        h.environment = [
            "REPAIRSYNCD_PROBE_MODE": "poll", "REPAIRSYNCD_PROBE_OFFLINE_INTERVAL": "1s",
            "REPAIRSYNCD_PROBE_ONLINE_INTERVAL": "1s", "REPAIRSYNCD_PROBE_TIMEOUT": "1s",
            "REPAIRSYNCD_SYNC_PUSH_DEBOUNCE": "100ms",
        ]
        try await h.start()
        _ = try await h.call("sync", .object(["wait": .bool(true)]))
        #expect(try await h.call("status")["probe"] == .string("poll"))
        let watcher = try StatusWatcher(path: h.socketPath)

        await server.stop()
        let stopped = ContinuousClock.now
        let offline = await watcher.wait(timeout: 20) { $0["state"] == .string("offline") }
        #expect(offline != nil, "\(watcher.states)")
        let detection = ContinuousClock.now - stopped
        // One online interval (1 s), one health timeout (1 s), and slack for a loaded machine (7 s stalls were seen).
        #expect(detection < .seconds(12), "offline after \(detection)")
        let runsWhileOffline = try await h.call("status")["metrics"]?["runs"]?.intValue ?? -1
        do {
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            Issue.record("a sync ran while the API was unreachable")
        } catch let ControlClient.Failure.rpc(error) {
            #expect(error.code == -32005)
            #expect(error.message.contains("offline"))
        }
        _ = try await h.call("updateOrder", .object(["id": .string("ord_3"), "notes": .string("written offline")]))
        #expect(try await h.call("status")["pending"] == .number(1))

        let restarted = try await ServerProcess(arguments: Self.seedArguments(db) + ["--port", "\(server.port)"])
        defer { Task { await restarted.stop() } }
        let pushed = await watcher.wait(after: offline ?? 0, timeout: 20) {
            $0["state"] == .string("completed") && $0["pending"] == .number(0)
        }
        #expect(pushed != nil, "\(watcher.states)")
        let status = try await h.call("status")
        #expect(status["online"] == .bool(true))
        #expect(
            status["metrics"]?["runs"]?.intValue == runsWhileOffline + 1,
            "only the reconnect run: nothing was attempted while offline")
        let order = try await RunningAddress(port: server.port).get("/api/v1/orders/ord_3", token: RunningBackend.token)
        #expect(try order.object()["notes"] as? String == "written offline")
        await restarted.stop()
    }

    @Test("netlink mode: link down → offline; link up → the pending change is pushed within 2 s")
    func netlinkMode() async throws {
        guard geteuid() == 0 else {
            print("skipping the netlink test: creating network namespaces needs root")
            try Test.cancel("needs root to create network namespaces")
        }
        let suffix = String(UInt32.random(in: 0...0xFFFF), radix: 16)
        let daemonNS = "rsd-\(suffix)-a"
        let serverNS = "rsd-\(suffix)-b"
        do {
            try await Self.ip(["netns", "add", daemonNS])
        } catch {
            print("skipping the netlink test: \(error)")
            try Test.cancel("network namespaces cannot be created here: \(error)")
        }
        defer { Self.deleteNamespaces(daemonNS, serverNS) }
        let subnet = Int.random(in: 1...250)
        try await Self.ip(["netns", "add", serverNS])
        try await Self.ip([
            "link", "add", "va", "netns", daemonNS, "type", "veth", "peer", "name", "vb", "netns", serverNS,
        ])
        try await Self.ip(["-n", daemonNS, "addr", "add", "10.77.\(subnet).1/24", "dev", "va"])
        try await Self.ip(["-n", serverNS, "addr", "add", "10.77.\(subnet).2/24", "dev", "vb"])
        for (ns, link) in [(daemonNS, "va"), (serverNS, "vb")] {
            try await Self.ip(["-n", ns, "link", "set", "lo", "up"])
            try await Self.ip(["-n", ns, "link", "set", link, "up"])
        }
        let data = try TemporaryDirectory(prefix: "server")
        let server = try await ServerProcess(
            arguments: Self.seedArguments(data.path("api.sqlite")) + ["--host", "10.77.\(subnet).2", "--port", "8080"],
            launcher: ["/usr/sbin/ip", "netns", "exec", serverNS])
        defer { Task { await server.stop() } }
        let h = try DaemonHarness(baseURL: server.baseURL)
        defer {
            h.kill(SIGKILL)
            h.notify.close()
        }
        try h.writeConfig("probe:\n  mode: netlink\n  offline_interval: 1h\n  debounce: 200ms\n  timeout: 1s")
        h.environment = ["REPAIRSYNCD_API_ALLOW_INSECURE_HTTP": "true", "REPAIRSYNCD_SYNC_PUSH_DEBOUNCE": "100ms"]
        h.launcher = ["/usr/sbin/ip", "netns", "exec", daemonNS]
        try await h.start()
        _ = try await h.call("sync", .object(["wait": .bool(true)]))
        #expect(try await h.call("status")["probe"] == .string("netlink"))
        let watcher = try StatusWatcher(path: h.socketPath)

        try await Self.ip(["-n", daemonNS, "link", "set", "va", "down"])
        let offline = await watcher.wait(timeout: 10) { $0["state"] == .string("offline") }
        #expect(offline != nil, "link down was not noticed: \(watcher.states)")
        _ = try await h.call("updateOrder", .object(["id": .string("ord_4"), "notes": .string("across the link")]))

        try await Self.ip(["-n", daemonNS, "link", "set", "va", "up"])
        let up = ContinuousClock.now
        let pushed = await watcher.wait(after: offline ?? 0, timeout: 10) {
            $0["state"] == .string("completed") && $0["pending"] == .number(0)
        }
        let elapsed = ContinuousClock.now - up
        print("netlink: the pending change was pushed \(elapsed) after the link came back")
        #expect(pushed != nil, "\(watcher.states)")
        // Polling is an hour away (offline_interval 1h): within seconds, only netlink can have told it. The bound
        // leaves a loaded machine room for the debounce, the health check and the run.
        #expect(elapsed < .seconds(8), "pushed \(elapsed) after the link came back")
        let order = try await h.call("getOrder", .object(["id": .string("ord_4")]))
        #expect(order["order"]?["notes"] == .string("across the link"))
        #expect(order["order"]?["version"] != .number(1), "the server's copy came back with a new version")
    }

    static func ip(_ arguments: [String]) async throws { try await networkCommand("/usr/sbin/ip", arguments) }

    /// Runs a network tool (`ip`, `tc`) to its end; its output in the error when it fails.
    static func networkCommand(_ path: String, _ arguments: [String]) async throws {
        let (status, output) = try await ChildProcess.run([path] + arguments, mergeErrors: true)
        guard status == 0 else {
            let name = (path as NSString).lastPathComponent
            throw IPCommandFailed(command: ([name] + arguments).joined(separator: " "), message: output)
        }
    }

    /// Deletes the namespaces once the test is over (as the server is stopped: on a task of its own, since a
    /// `defer` cannot wait).
    static func deleteNamespaces(_ names: String...) {
        Task { for name in names { try? await ip(["netns", "del", name]) } }
    }

    struct IPCommandFailed: Error, CustomStringConvertible {
        let command: String
        let message: String
        var description: String { "\(command) failed: \(message.trimmingCharacters(in: .whitespacesAndNewlines))" }
    }
}
