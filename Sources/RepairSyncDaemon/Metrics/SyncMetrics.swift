public import Foundation
internal import Logging
internal import Prometheus
public import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol
internal import Synchronization

/// How well sync is doing: every run's report (kept 24 h for `repairctl stats`), lifetime totals, and the same as
/// Prometheus metrics (swift-prometheus) written to `metrics.textfile` for node_exporter's textfile collector.
public final class SyncMetrics: Sendable {
    struct Run {
        var at: Date
        var report: SyncReport
    }

    private let runs = Mutex<(recent: [Run], lifetime: Totals)>(([], Totals()))
    private let registry = PrometheusCollectorRegistry()
    let textfile: String?

    struct Totals {
        var runs = 0
        var successes = 0
        var failures = 0
        var durationMilliseconds: Int64 = 0
        var lastDurationMilliseconds: Int64?
        var conflicts = 0
        var pushed: [String: Int] = [:]
        var pulled: [String: Int] = [:]

        mutating func add(_ report: SyncReport) {
            runs += 1
            if report.succeeded { successes += 1 } else { failures += 1 }
            durationMilliseconds += report.durationMilliseconds
            lastDurationMilliseconds = report.durationMilliseconds
            conflicts += report.conflicts
            for (collection, count) in report.pushedByCollection { pushed[collection, default: 0] += count }
            for (collection, count) in report.pulled { pulled[collection, default: 0] += count }
        }
    }

    let logger: Logger
    /// Whether the last write of the textfile failed (its failure is logged once, and its recovery).
    private let textfileFailing = Mutex(false)

    public init(textfile: String?) {
        self.textfile = textfile
        logger = Logger(label: "repairsyncd.metrics")
    }

    /// `repairsyncd_<name>_<unit>`, with its help text.
    static func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "repairsyncd", metricName: name, unitName: unit, helpText: help)
    }

    /// Records a finished run (engine event: any run, scheduled or asked for).
    public func record(_ report: SyncReport, at date: Date = Date()) {
        runs.withLock { state in
            state.lifetime.add(report)
            state.recent.append(Run(at: date, report: report))
            let dayAgo = date.addingTimeInterval(-86_400)
            state.recent.removeAll { $0.at < dayAgo }
        }
        let result = report.succeeded ? "success" : report.offline ? "offline" : "failure"
        registry.makeCounter(
            descriptor: Self.name("sync_runs", "total", "Sync runs by result"), labels: [("result", result)]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: Self.name("sync_duration", "seconds", "Duration of sync runs"),
            buckets: [
                .milliseconds(50), .milliseconds(250), .seconds(1), .seconds(5), .seconds(30), .seconds(120),
                .seconds(600),
            ]
        ).recordNanoseconds(report.durationMilliseconds * 1_000_000)
        for (collection, count) in report.pushedByCollection where count > 0 {
            registry.makeCounter(
                descriptor: Self.name("pushed_changes", "total", "Local changes pushed"),
                labels: [("collection", collection)]
            )
            .increment(by: Int64(count))
        }
        for (collection, count) in report.pulled where count > 0 {
            registry.makeCounter(
                descriptor: Self.name("pulled_records", "total", "Records pulled"), labels: [("collection", collection)]
            )
            .increment(by: Int64(count))
        }
    }

    /// Sets the gauges from the current status and the HTTP counts, then rewrites the text file (atomically).
    public func publish(_ status: EngineStatus, responses: [String: Int]) {
        registry.makeGauge(descriptor: Self.name("pending", "changes", "Local changes not on the server yet")).set(
            Double(status.pending))
        registry.makeGauge(descriptor: Self.name("dead", "changes", "Local changes given up on")).set(
            Double(status.dead))
        registry.makeGauge(descriptor: Self.name("open", "conflicts", "Conflicts waiting for a decision")).set(
            Double(status.openConflicts))
        registry.makeGauge(descriptor: Self.name("online", "bool", "1 while the API is reachable")).set(
            to: status.phase == .offline ? 0.0 : 1.0)
        if let last = status.lastSuccessAt {
            registry.makeGauge(
                descriptor: Self.name("last_success_timestamp", "seconds", "When the last sync succeeded (Unix time)")
            )
            .set(Double(last.millisecondsSince1970) / 1000)
        }
        for (outcome, count) in status.metrics.conflictsByOutcome {
            // The audit log is the source: a gauge of its totals per outcome (retention.days prunes old entries, so
            // it may go down).
            registry.makeGauge(
                descriptor: Self.name("conflicts_resolved", "count", "Conflicts in the audit log by outcome"),
                labels: [("outcome", outcome)]
            ).set(Double(count))
        }
        if let link = status.link {
            if let rtt = link.roundTripMilliseconds {
                registry.makeGauge(
                    descriptor: Self.name("link_rtt", "seconds", "Round trip to the API as last measured")
                )
                .set(Double(rtt) / 1000)
            }
            if let throughput = link.throughputBytesPerSecond {
                registry.makeGauge(
                    descriptor: Self.name(
                        "link_throughput", "bytes_per_second", "Answer bytes per second on the wire, smoothed")
                )
                .set(Double(throughput))
            }
            registry.makeGauge(descriptor: Self.name("link_slow", "bool", "1 while the link to the API counts as slow"))
                .set(to: link.verdict == .slow ? 1.0 : 0.0)
            if let pageSize = link.pageSize {
                registry.makeGauge(
                    descriptor: Self.name("page_size", "records", "Records per changes page asked for last")
                )
                .set(Double(pageSize))
            }
        }
        for (kind, count) in responses {
            registry.makeGauge(
                descriptor: Self.name("http_responses", "count", "API responses since start by status class"),
                labels: [("class", kind)]
            ).set(Double(count))
        }
        writeTextfile()
    }

    /// The Prometheus text exposition.
    public var exposition: String { registry.emitToString() }

    /// Writes the textfile whole (a rename), readable by node_exporter's user: 0644 whatever the daemon's umask
    /// (the unit's 0077) — it holds counts only. A failure (a missing directory, one not in the unit's
    /// `ReadWritePaths=`) is logged once, not at every status change, and node_exporter would go on serving the
    /// last values written.
    func writeTextfile() {
        guard let textfile else { return }
        let temporary = textfile + ".tmp"
        var problem: String?
        if !FileManager.default.createFile(atPath: temporary, contents: Data(exposition.utf8)) {
            problem = "cannot write \(temporary)"
        } else if chmod(temporary, 0o644) != 0 || rename(temporary, textfile) != 0 {
            problem = "cannot put \(textfile) in place (errno \(errno))"
        }
        let was = textfileFailing.withLock { failing in
            defer { failing = problem != nil }
            return failing
        }
        if let problem, !was {
            logger.warning(
                "metrics.textfile cannot be written; node_exporter keeps its last values (ReadWritePaths= in the unit?)",
                metadata: ["problem": "\(problem)"])
        } else if problem == nil, was {
            logger.notice("metrics.textfile written again", metadata: ["file": "\(textfile)"])
        }
    }

    /// Whether the textfile could not be written the last time (for doctor).
    var textfileFailed: Bool { textfileFailing.withLock { $0 } }

    /// `repairctl stats`: over the daemon's lifetime and the last 24 hours.
    func stats(status: EngineStatus, responses: [String: Int], now: Date = Date()) -> StatsReport {
        let (recent, lifetime) = runs.withLock { state in
            (state.recent.filter { $0.at >= now.addingTimeInterval(-86_400) }, state.lifetime)
        }
        var day = Totals()
        for run in recent { day.add(run.report) }
        func period(_ totals: Totals) -> StatsReport.Period {
            let runs = totals.runs
            return StatsReport.Period(
                runs: runs, successes: totals.successes, failures: totals.failures,
                successRate: runs == 0 ? nil : Thousandths(Double(totals.successes) / Double(runs)),
                averageDurationMs: runs == 0 ? nil : totals.durationMilliseconds / Int64(runs),
                lastDurationMs: totals.lastDurationMilliseconds, conflicts: totals.conflicts,
                conflictRate: runs == 0 ? nil : Thousandths(Double(totals.conflicts) / Double(runs)),
                pushed: totals.pushed, pulled: totals.pulled)
        }
        return StatsReport(
            lifetime: period(lifetime), last24h: period(day), conflictOutcomes: status.metrics.conflictsByOutcome,
            httpResponses: responses)
    }
}
