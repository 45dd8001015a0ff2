internal import AsyncHTTPClient
internal import Foundation
public import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// One run of the conformance checks against a server.
///
/// The run reads before it writes: the basic probes, then every feed twice, then it opens the change stream, then —
/// unless `dryRun` — the writes, on records it picks and announces first (`announce`), restoring the fields it
/// changed (and, with `creates`, three new records, which stay); then it looks for the writes on the stream. Clauses that only the server
/// can provoke (tombstones, an expired cursor, a 429) are judged when they occur during the run.
///
/// ```swift
/// let report = await ConformanceRun(options: .init(baseURL: "https://minder.example.com", token: token))
///     .run { line in print(line) }
/// exit(report.exitCode)
/// ```
public final class ConformanceRun {
    let options: ConformanceOptions
    let client: ConformanceClient
    /// Streams the change stream (4.8), which the request/response transport cannot: the daemon's default client, or
    /// the one with `--ca-file` / `--proxy`.
    let eventsHTTP: HTTPClient
    let findings = Findings()
    var inspector: RecordInspector { RecordInspector(findings: findings) }
    /// Each feed's first read, once done.
    var reads: [SyncCollection: FeedRead] = [:]
    /// The latest cursor known to be at the end of each feed.
    var tails: [SyncCollection: String] = [:]
    var writes: [PlannedWrite] = []
    /// 410s met while reading a feed (not the probe that asks for one).
    var expiredCursors: [(collection: SyncCollection, exchange: Exchange, recovered: Bool)] = []
    /// Names the run's keys, markers and message, so what it wrote can be found on the server afterwards.
    let runID = String(UUID().uuidString.prefix(8)).lowercased()
    private var keyCounter = 0

    /// `transport` replaces the HTTP transport (nil: AsyncHTTPClient to `options.baseURL`, as the daemon).
    public convenience init(options: ConformanceOptions, transport: (any APITransport)? = nil) {
        self.init(options: options, transport: transport, eventsHTTP: HTTPTransport.defaultHTTPClient)
    }

    /// A run that reaches the server through `transport`'s TLS and proxy settings, the change stream included.
    public convenience init(options: ConformanceOptions, transport: ConformanceTransport) {
        self.init(options: options, transport: transport.transport, eventsHTTP: transport.http)
    }

    private init(options: ConformanceOptions, transport: (any APITransport)?, eventsHTTP: HTTPClient) {
        self.options = options
        self.client = ConformanceClient(options: options, transport: transport)
        self.eventsHTTP = eventsHTTP
    }

    public func run(announce: (String) -> Void = { _ in }) async -> ConformanceReport {
        let (health, _) = await client.call { api throws(APIError) in _ = try await api.health() }
        guard health.status != nil else {
            let reason = "the server does not answer: GET /api/v1/health \(health.answer)"
            return report(abortedBecause: reason, skipping: reason)
        }
        judgeHealth(health)
        if wants(
            [
                "auth-missing", "auth-invalid", "unknown-collection", "feed-limit-range", "feed-unknown-cursor",
                "dashboard",
            ] + Self.compressionClauses)
        {
            await basicProbes()
        }
        let feedClauses = [
            "feed-paging", "feed-limit", "feed-unique", "feed-cursor", "feed-reread", "record-get",
            "record-keys", "timestamps", "money", "tombstones", "feed-expired",
        ]
        if wants(feedClauses) {
            for collection in SyncCollection.pullOrder { await checkFeed(collection) }
        } else {
            for collection in SyncCollection.pullOrder { skipAll(feedClauses, collection, "not selected") }
        }
        // The change stream is opened before the writes, so that it can announce them.
        let events = wants(Self.eventClauses) ? await openEvents() : nil
        await writeChecks(announce: announce)
        if let events {
            await judgeAnnouncements(events.stream, since: events.mark)
            await probeEventsRefusals()
        }
        judgeObservations()
        return report(abortedBecause: nil, skipping: nil)
    }

    // MARK: Selection

    func selected(_ id: CheckID) -> Bool {
        guard let clause = ConformanceCatalog.clause(id.clause) else { return false }
        return options.selects(id, section: clause.section)
    }

    /// Whether any check of these clauses (on any collection) is selected.
    func wants(_ clauses: [String]) -> Bool {
        clauses.contains { name in ConformanceCatalog.clause(name)?.checkIDs.contains(where: selected) ?? false }
    }

    func wants(_ clause: String, _ collection: SyncCollection? = nil) -> Bool {
        selected(CheckID(clause: clause, collection: collection))
    }

    private func skipAll(_ clauses: [String], _ collection: SyncCollection, _ reason: String) {
        for clause in clauses { findings.skip(CheckID(clause: clause, collection: collection), reason) }
    }

    // MARK: Helpers for the checks

    /// `1 page`, `3 pages`.
    func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// A fresh Idempotency-Key naming the run.
    func nextKey() -> String {
        keyCounter += 1
        return "repair-api-conformance-\(runID)-\(keyCounter)"
    }

    /// The record as the server has it now, or why not.
    func currentRecord(_ collection: SyncCollection, _ id: String) async -> Result<JSONValue, Unobtainable> {
        let (exchange, _) = await client.call { api throws(APIError) in _ = try await api.record(collection, id: id) }
        guard exchange.status == 200 else {
            return .failure(Unobtainable("\(exchange.requestLine) \(exchange.answer)"))
        }
        guard let record = try? JSONText.parse(exchange.body), record.members != nil else {
            return .failure(Unobtainable("\(exchange.requestLine) answered 200 without a JSON object"))
        }
        inspector.inspect(record, of: collection, origin: exchange.requestLine)
        return .success(record)
    }

    private func report(abortedBecause: String?, skipping reason: String?) -> ConformanceReport {
        var results: [CheckResult] = []
        for clause in ConformanceCatalog.clauses {
            for id in clause.checkIDs where options.selects(id, section: clause.section) {
                if let reason { findings.skip(id, reason) }
                results.append(findings.result(for: id, clause: clause))
            }
        }
        return ConformanceReport(
            baseURL: options.baseURL, results: results, writes: writes, abortedBecause: abortedBecause)
    }
}

/// Why something a check needs (a record, a record to write to) could not be had, in words for its reason.
struct Unobtainable: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
