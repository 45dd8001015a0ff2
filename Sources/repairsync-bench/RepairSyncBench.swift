import ArgumentParser
import Foundation

/// `repairsync-bench`: the performance scenarios of issue 10 against the real binaries (repair-api-dev, repairsyncd,
/// repairctl) as processes. Every timing is shown beside a baseline measured in the same run, because the machines
/// these run on are noisy. `scripts/bench` builds in release mode and runs this.
@main
struct RepairSyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairsync-bench",
        abstract: "Runs every performance scenario and prints the table (and writes it into a Markdown file).")

    @Option(
        help: ArgumentHelp(
            "The directory with the release binaries (repair-api-dev, repairsyncd, repairctl).",
            valueName: "dir"))
    var bin: String

    @Option(help: "Orders in the large shop (devices 1.5×, clients ½×, tickets ½×, messages 2× as many).")
    var orders = 100_000

    @Option(help: "Orders in the small shop (the second size for peak RSS and for the scale scenario).")
    var smallOrders = 10_000

    @Option(
        help: ArgumentHelp(
            "A shop N times larger: N × 100,000 orders against 100,000 (1×), only the scenarios that compare sizes (initial sync and its floor, peak RSS, the pull of 1,000 changed orders, listOrders and getOrder, store size); written between the bench-scale markers.",
            valueName: "N"))
    var scale: Int?

    @Option(help: "Changes pushed with no added latency (and sent by the sequential baseline).")
    var pushChanges = 10_000

    @Option(help: "Changes pushed with added latency (and sent by the sequential baseline).")
    var slowPushChanges = 1_000

    @Option(help: "Added latency per API request in the slow push scenario, in milliseconds.")
    var latencyMs = 20

    @Option(help: "Seconds the idle daemon is watched.")
    var idleSeconds = 60

    @Option(
        help: ArgumentHelp(
            "Where the processes keep their files (a new temporary directory by default).",
            valueName: "dir"))
    var work: String?

    @Option(
        help: ArgumentHelp("A Markdown file to write the results into, between the bench markers.", valueName: "path"))
    var markdown: String?

    @Option(help: "The commit being measured (for the report).")
    var commit = "unknown"

    @Option(
        help: ArgumentHelp(
            "Measure only the package: this .deb's binaries beside the dynamic ones in --bin (sizes, start-up, idle RSS).",
            valueName: "deb"))
    var package: String?

    @Option(
        help: ArgumentHelp(
            "Run only this scenario (booking: booking in over the socket, then 1,000 offline bookings pushed; server-push: 100 server edits seen in the replica with and without the change stream, and the idle cost of the open stream; compression: the initial sync over a throttled link with and without gzip) on a shop of --small-orders orders; reads: listOrders and getOrder on a shop of --orders orders against one of --small-orders, cold and with both stores in the page cache; pull: the pull of 1,000 orders changed on the server, the same two shops; queue-change: queueChange from 1 and 20 clients on a shop of --orders orders; initial-sync: the initial sync of a shop of --orders orders twice, beside its floor), and print its rows (nothing is written into --markdown).",
            valueName: "scenario"))
    var only: String?

    func validate() throws {
        if let scale, scale < 2 { throw ValidationError("--scale must be at least 2") }
        if let only {
            guard
                ["booking", "server-push", "compression", "reads", "pull", "queue-change", "initial-sync"].contains(
                    only)
            else {
                throw ValidationError(
                    "--only takes booking, server-push, compression, reads, pull, queue-change or initial-sync")
            }
            guard markdown == nil else { throw ValidationError("--only prints its rows; it does not write --markdown") }
        }
        guard orders >= 2 * smallOrders, smallOrders >= 1000 else {
            throw ValidationError("--orders must be at least twice --small-orders, and --small-orders at least 1000")
        }
        let needed = ScenarioPlan.ordersNeeded(pushChanges: pushChanges, slowPushChanges: slowPushChanges)
        guard orders >= needed else {
            throw ValidationError("--orders must be at least \(needed) for these change counts")
        }
    }

    func run() async throws {
        let directory = try work ?? Self.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let package {
            let bench = PackageBench(deb: package, dynamicBin: bin, work: directory, idleSeconds: min(idleSeconds, 40))
            let rows = try await bench.run()
            print(bench.markdown(rows, commit: commit, machine: Machine.current()))
            if let markdown { try bench.write(rows, into: markdown, commit: commit) }
            if work == nil { try? FileManager.default.removeItem(atPath: directory) }
            return
        }
        let plan = ScenarioPlan(
            binaries: URL(fileURLWithPath: bin), workDirectory: directory,
            orders: scale.map { $0 * Self.baseOrders } ?? orders,
            smallOrders: scale == nil ? smallOrders : Self.baseOrders,
            pushChanges: pushChanges, slowPushChanges: slowPushChanges, latencyMilliseconds: latencyMs,
            idleSeconds: idleSeconds, scaleFactor: scale)
        let started = ContinuousClock.now
        if only != nil {
            let run = BenchRun(plan: plan)
            let results =
                switch only {
                case "server-push": try await run.runServerPushOnly()
                case "compression": try await run.runCompressionOnly()
                case "reads": try await run.runReadsOnly()
                case "pull": try await run.runPullOnly()
                case "queue-change": try await run.runQueueChangeOnly()
                case "initial-sync": try await run.runInitialSyncOnly()
                default: try await run.runBookingOnly()
                }
            let report = BenchReport(
                results: results, machine: Machine.current(), commit: commit, plan: plan,
                wallTime: ContinuousClock.now - started)
            Log.say("")
            print(report.table())
            if work == nil { try? FileManager.default.removeItem(atPath: directory) }
            return
        }
        let results = try await BenchRun(plan: plan).run()
        let report = BenchReport(
            results: results, machine: Machine.current(), commit: commit, plan: plan,
            wallTime: ContinuousClock.now - started)
        Log.say("")
        print(report.table())
        if let markdown { try report.write(into: markdown) }
        if work == nil { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The 1× shop of `--scale`.
    static let baseOrders = 100_000

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "repairsync-bench-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Progress lines on standard error, so the table on standard output stays clean.
enum Log {
    static func say(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
