import Foundation
import RepairSyncProtocol
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// Scenario 1c: the small shop's initial sync over a throttled link, with the server compressing its answers (gzip,
/// the default) and with `--no-compression`: the time, and the bytes that crossed the link.
///
/// As root, the link is a veth pair between two network namespaces, the server's side shaped by the kernel
/// (`tc qdisc … tbf rate 8mbit`); the bytes are the server side's transmitted bytes (`tx_bytes`: every packet it
/// sent, TCP and IP headers included). Without root, the link is `ShapedLink`, a user-space proxy on loopback at the
/// same rate, and the bytes are those it carried from the server (TCP payload).
extension BenchRun {
    struct ThrottledSync {
        var time: Duration
        var records: Int
        var wireBytes: Int
        /// What the daemon's link meter measured (`link.throughputBytesPerSecond`).
        var measuredThroughput: Int?
        var quality: String?
    }

    /// The shaped rate: 8 Mbit/s.
    static let throttledRate = 1_000_000

    /// `--only compression`: this scenario alone, on a shop of `--small-orders` orders seeded for it.
    func runCompressionOnly() async throws -> [ResultRow] {
        Log.say("==> seeding a shop of \(plan.smallOrders) orders")
        let seeding = try await APIServerProcess(
            database: plan.path("small-backend.sqlite"), orders: plan.smallOrders,
            logPath: plan.path("small-backend.log"))
        await seeding.stop()
        return try await compressionOverThrottledLink()
    }

    func compressionOverThrottledLink() async throws -> [ResultRow] {
        let link: any ThrottledLink
        if geteuid() == 0, let namespaces = try? await NamespaceLink.make(rate: Self.throttledRate) {
            link = namespaces
        } else {
            Log.say("    (not root, or no network namespaces: the user-space shaper instead of tc tbf)")
            link = UserSpaceLink()
        }
        defer { link.tearDown() }
        Log.say("==> initial sync of the small shop over \(link.name)")
        var runs: [Bool: ThrottledSync] = [:]
        for compressed in [true, false] {
            runs[compressed] = try await throttledSync(over: link, compressed: compressed)
            let run = runs[compressed]!
            Log.say(
                "    \(compressed ? "gzip" : "uncompressed"): \(run.records) records in \(Format.seconds(run.time)), "
                    + "\(Self.megabytes(run.wireBytes)) on the wire; the daemon measured "
                    + "\(run.measuredThroughput.map { "\($0 / 1000) KB/s" } ?? "no throughput"), \(run.quality ?? "?") link"
            )
        }
        let gzip = runs[true]!
        let plain = runs[false]!
        guard gzip.records == plain.records else {
            throw BenchError("compressed \(gzip.records) records, uncompressed \(plain.records)")
        }
        let timeRatio = gzip.time / plain.time
        let byteRatio = Double(gzip.wireBytes) / Double(plain.wireBytes)
        var rows = [
            ResultRow(
                scenario: "initial sync over \(link.name), gzip, \(gzip.records) records",
                measured: Format.seconds(gzip.time),
                baseline: "uncompressed: \(Format.seconds(plain.time))", ratio: Format.ratio(timeRatio),
                target: "≤ 0.5× uncompressed", passed: timeRatio <= 0.5),
            ResultRow(
                scenario: "bytes on the wire, that initial sync (\(link.counting))",
                measured: Self.megabytes(gzip.wireBytes),
                baseline: "uncompressed: \(Self.megabytes(plain.wireBytes))", ratio: Format.ratio(byteRatio),
                target: "≤ 0.25× uncompressed", passed: byteRatio <= 0.25),
        ]
        if let measured = plain.measuredThroughput {
            let ratio = Double(measured) / Double(Self.throttledRate)
            rows.append(
                ResultRow(
                    scenario: "throughput the daemon measured, uncompressed sync over \(link.name)",
                    measured: "\(measured / 1000) KB/s (\(plain.quality ?? "?") link)",
                    baseline: "the shaped rate: \(Self.throttledRate / 1000) KB/s", ratio: Format.ratio(ratio),
                    target: "0.7–1.15× the rate", passed: ratio >= 0.7 && ratio <= 1.15))
        }
        return rows
    }

    /// One initial sync of the small shop through `link`, from a server started for it on the small shop's data.
    private func throttledSync(over link: any ThrottledLink, compressed: Bool) async throws -> ThrottledSync {
        let name = compressed ? "gzip" : "plain"
        let server = try await APIServerProcess(
            database: plan.path("small-backend.sqlite"), orders: plan.smallOrders,
            logPath: plan.path("throttled-backend-\(name).log"),
            extra: (compressed ? [] : ["--no-compression"]) + link.serverArguments, launcher: link.serverLauncher)
        defer { server.process.signal(SIGTERM) }
        let baseURL = try await link.clientURL(for: server)
        let daemon = try Self.daemon(directory: plan.path("daemon-throttled-\(name)"), baseURL: baseURL)
        daemon.launcher = link.daemonLauncher
        daemon.environment["REPAIRSYNCD_API_ALLOW_INSECURE_HTTP"] = "true"
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        let before = try link.bytesFromServer()
        let (status, time) = try await Self.startAndWaitForFirstRun(daemon)
        try Self.requireSuccess(status)
        let after = try link.bytesFromServer()
        await daemon.stop()
        await server.stop()
        return ThrottledSync(
            time: time, records: Self.records(status), wireBytes: after - before,
            measuredThroughput: status["link"]?["throughputBytesPerSecond"]?.intValue,
            quality: status["link"]?["quality"]?.stringValue)
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.2f MB", Double(bytes) / 1e6) }
}
