import BackendTestSupport
import Foundation
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

/// The daemon on a slow link, as an admin sees it: `status` (`link`), `repairctl status` and the metrics — through a
/// delaying proxy on loopback (no root needed), and through a link the kernel throttles (`tc … tbf` between two
/// network namespaces; root only).
@Suite("Link quality in the status", .serialized, .timeLimit(.minutes(2)))
struct LinkStatusTests {
    @Test(
        "through a delaying proxy (a 500 ms round trip): status, repairctl status and the metrics say slow; the sync completes"
    )
    func delayingProxy() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 30)) { backend in
            let link = try await ShapedLink.start(upstreamPort: backend.port, delay: .milliseconds(250))
            defer { Task { try? await link.stop() } }
            let h = try DaemonHarness(baseURL: "http://127.0.0.1:\(link.port)")
            defer {
                h.kill(SIGKILL)
                h.notify.close()
            }
            try h.writeConfig("metrics:\n  textfile: \(h.directory.path("metrics.prom"))")
            try await h.start()
            let report = try await h.call("sync", .object(["wait": .bool(true)]))
            #expect(report["stop"] == nil, "\(report)")
            let status = try await h.call("status")
            #expect(status["collections"]?.arrayElements.allSatisfy { $0["records"]?.intValue ?? 0 > 0 } == true)
            let linkStatus = try #require(status["link"])
            #expect(linkStatus["quality"] == .string("slow"), "\(linkStatus)")
            let rtt = try #require(linkStatus["rttMs"]?.intValue)
            #expect(rtt >= 500 && rtt < 3_000, "\(linkStatus)")
            #expect(
                linkStatus["pageSize"] == .number(100),
                "a long round trip alone leaves pages as configured: \(linkStatus)")

            let shown = try await h.repairctl(["status"])
            #expect(shown.status == 0, "\(shown.stderr)")
            let network = shown.stdout.split(separator: "\n").first { $0.hasPrefix("network:") } ?? ""
            #expect(network.contains("online, slow link: \(rtt) ms"), "\(shown.stdout)")

            // The text file is rewritten after each status change the run made; wait for one with the link in it.
            let metricsPath = h.directory.path("metrics.prom")
            let read: @Sendable () -> String = { (try? String(contentsOfFile: metricsPath, encoding: .utf8)) ?? "" }
            try await PushStack.waitUntil("the metrics file with the link in it", timeout: .seconds(10)) {
                read().contains("repairsyncd_link_slow_bool")
            }
            let metrics = read()
            #expect(metrics.contains("repairsyncd_link_slow_bool 1"), "\(metrics)")
            #expect(metrics.contains("repairsyncd_link_rtt_seconds"), "\(metrics)")
        }
    }

    @Test("through a link the kernel throttles (tbf, 256 kbit/s): status says slow, pages shrink, the sync completes")
    func throttledLink() async throws {
        guard geteuid() == 0 else {
            print("skipping the throttled-link test: network namespaces and tc need root")
            try Test.cancel("needs root to create network namespaces and shape a link with tc")
        }
        let suffix = String(UInt32.random(in: 0...0xFFFF), radix: 16)
        let daemonNS = "rsl-\(suffix)-a"
        let serverNS = "rsl-\(suffix)-b"
        do {
            try await ConnectivityTests.ip(["netns", "add", daemonNS])
        } catch {
            print("skipping the throttled-link test: \(error)")
            try Test.cancel("network namespaces cannot be created here: \(error)")
        }
        defer { ConnectivityTests.deleteNamespaces(daemonNS, serverNS) }
        let subnet = Int.random(in: 1...250)
        try await ConnectivityTests.ip(["netns", "add", serverNS])
        try await ConnectivityTests.ip(
            ["link", "add", "va", "netns", daemonNS, "type", "veth", "peer", "name", "vb", "netns", serverNS])
        try await ConnectivityTests.ip(["-n", daemonNS, "addr", "add", "10.78.\(subnet).1/24", "dev", "va"])
        try await ConnectivityTests.ip(["-n", serverNS, "addr", "add", "10.78.\(subnet).2/24", "dev", "vb"])
        for (ns, device) in [(daemonNS, "va"), (serverNS, "vb")] {
            try await ConnectivityTests.ip(["-n", ns, "link", "set", "lo", "up"])
            try await ConnectivityTests.ip(["-n", ns, "link", "set", device, "up"])
        }
        // What the server sends goes out at 256 kbit/s (32 KB/s).
        do {
            try await Self.tc([
                "-n", serverNS, "qdisc", "add", "dev", "vb", "root", "tbf", "rate", "256kbit", "burst", "16kb",
                "latency", "400ms",
            ])
        } catch {
            print("skipping the throttled-link test: \(error)")
            try Test.cancel("tc cannot shape the link here: \(error)")
        }
        let data = try TemporaryDirectory(prefix: "server")
        // Unencoded answers, so that 100 orders are enough bytes for the link to matter.
        let server = try await ServerProcess(
            arguments: [
                "--seed", "--orders", "100", "--db", data.path("api.sqlite"), "--token", RunningBackend.token,
                "--quiet", "--no-compression", "--host", "10.78.\(subnet).2", "--port", "8080",
            ],
            launcher: ["/usr/sbin/ip", "netns", "exec", serverNS])
        defer { Task { await server.stop() } }
        let h = try DaemonHarness(baseURL: server.baseURL)
        defer {
            h.kill(SIGKILL)
            h.notify.close()
        }
        h.environment = ["REPAIRSYNCD_API_ALLOW_INSECURE_HTTP": "true", "REPAIRSYNCD_SYNC_PAGE_SIZE": "1000"]
        h.launcher = ["/usr/sbin/ip", "netns", "exec", daemonNS]
        try await h.start()
        let report = try await h.call("sync", .object(["wait": .bool(true)]))
        #expect(report["stop"] == nil, "\(report)")
        let status = try await h.call("status")
        let orders = status["collections"]?.arrayElements.first { $0["collection"] == .string("orders") }
        #expect(orders?["records"] == .number(100))
        let linkStatus = try #require(status["link"])
        #expect(linkStatus["quality"] == .string("slow"), "\(linkStatus)")
        let throughput = try #require(linkStatus["throughputBytesPerSecond"]?.intValue)
        #expect(throughput > 10_000 && throughput < 64_000, "tbf lets 32 KB/s through: \(linkStatus)")
        let pageSize = try #require(linkStatus["pageSize"]?.intValue)
        #expect(pageSize < 1000, "\(linkStatus)")
        let shown = try await h.repairctl(["status"])
        #expect(shown.stdout.contains("online, slow link: "), "\(shown.stdout)")
        #expect(shown.stdout.contains(" KB/s"), "\(shown.stdout)")
    }

    static func tc(_ arguments: [String]) async throws {
        try await ConnectivityTests.networkCommand("/usr/sbin/tc", arguments)
    }
}
