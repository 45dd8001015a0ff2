internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncProtocol

/// Scenario 3: a server that fails 30 % of requests — 500, 503, 429 with Retry-After, answers too slow for the
/// client's timeout, connections cut mid-body after the write was applied, truncated JSON — while another user
/// edits other fields of the same records. Every change must get through (no dead entries for transient faults),
/// no request may come back before its Retry-After, neither side's edit may be lost, and once the faults stop the
/// replica must equal the server.
public struct FaultyServer: Sendable {
    public var changes = 300
    public var faultRate = 0.3
    public var seed: UInt64 = 1

    public init(changes: Int = 300, faultRate: Double = 0.3, seed: UInt64 = 1) {
        self.changes = changes
        self.faultRate = faultRate
        self.seed = seed
    }

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("faulty-server") { workspace in
            try await ScenarioReport.measure("faulty server") { report in
                let config = """
                    retry:
                      base: 200ms
                      cap: 2s
                      max_attempts: 10
                    probe:
                      mode: poll
                      online_interval: 1s
                      offline_interval: 1s
                      timeout: 1s
                    """
                try await ScenarioStack.with(workspace, orders: ChangeSet.ordersNeeded(for: changes), config: config) {
                    server, daemon in
                    // Shorter than the server's slow answers; `api:` is already in the file, so through the environment.
                    daemon.environment["REPAIRSYNCD_API_REQUEST_TIMEOUT"] = "1s"
                    daemon.environment["REPAIRSYNCD_SYNC_PUSH_DEBOUNCE"] = "100ms"
                    try await daemon.start()
                    _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                    let before = try await server.admin.counters()
                    // A request counts as coming back before its Retry-After only from 300 ms after the 429 (not the
                    // server's 100): with 8 pushes in flight, one sent before the daemon read the 429 reached the
                    // server more than 100 ms later once in a full-suite run on 2 loaded cores. A client that ignores
                    // Retry-After (1 s) still sends within the other 700 ms.
                    try await server.admin.setFaults(
                        #"{"rate": \#(faultRate), "kinds": {"500": 1, "503": 1, "429": 1, "slow": 1, "cut": 1, "truncated": 1}, "seed": \#(seed), "retry_after": 1, "slow_ms": 1500, "in_flight_grace_ms": 300}"#
                    )

                    // Local changes through the socket while another user edits other fields of the same records.
                    var set = ChangeSet(count: changes, tag: "faulty-\(seed)")
                    let start = ContinuousClock.now
                    let serverEdits = set.changes.filter { $0.method != "replyToTicket" }.enumerated()
                        .filter { $0.offset % 3 == 0 }.map { ($0.element.collection, $0.element.recordId) }
                    async let edits: Void = {
                        for (collection, id) in serverEdits {
                            let field = collection == "orders" ? "location_name" : "resolution"
                            try await server.admin.edit(collection, id, [field: "server edit \(id)"])
                        }
                    }()
                    try await set.apply(to: daemon)
                    try await edits

                    // Every change on the server: nothing left in the outbox. (The state may well be `error`: with 30 % of
                    // requests failing, most full runs meet a fault while pulling.)
                    guard
                        try await daemon.waitForStatus(
                            timeout: 900, { $0["pending"]?.intValue == 0 && $0["failed"]?.intValue == 0 }) != nil
                    else {
                        throw ScenarioFailure("the outbox did not drain under faults: \(daemon.log().suffix(800))")
                    }
                    let drained = ContinuousClock.now - start
                    let status = try await daemon.call("status")
                    try await server.admin.setFaults(nil)
                    // A full sync once the faults stop. The first may still meet the wait a last 429 asked for (the
                    // run reports it); the next comes after that wait, as the scheduler's would.
                    var syncs = 0
                    var last: JSONValue = .null
                    repeat {
                        if let wait = last["retryAfterMilliseconds"]?.intValue {
                            try await Task.sleep(for: .milliseconds(wait + 20))
                        }
                        last = try await daemon.call("sync", .object(["wait": .bool(true)]))
                        syncs += 1
                    } while last["stop"] != nil && syncs < 5
                    let after = try await server.admin.counters()
                    await daemon.stop()
                    let outcome = try await set.verify(on: server.admin)
                    var clobbered = 0
                    for (collection, id) in serverEdits {
                        let field = collection == "orders" ? "location_name" : "resolution"
                        let records = try await server.admin.send("GET", "/api/v1/\(collection)/\(id)").object()
                        if records[field] as? String != "server edit \(id)" { clobbered += 1 }
                    }
                    let convergence = try await Convergence.compare(store: daemon.storePath, server: server.admin)
                    await server.stop()

                    let faults = after.faultsInjected.merging(before.faultsInjected) { $0 - $1 }
                    let requests = after.requests - before.requests
                    report.add(Figure("changes pushed", "\(set.changes.count - outcome.lost) of \(set.changes.count)"))
                    report.add(Figure("server edits to the same records", "\(serverEdits.count)"))
                    report.add(
                        Figure(
                            "API requests / faults injected",
                            "\(requests) / \(faults.values.reduce(0, +)) (\(faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))"
                        ))
                    report.add(
                        Figure(
                            "requests repeated after a fault (replays answered)",
                            "\(after.idempotentReplays - before.idempotentReplays + after.messageReplays - before.messageReplays)"
                        ))
                    report.add(.count("changes lost", outcome.lost, mustBe: 0))
                    report.add(.count("server edits lost", clobbered, mustBe: 0))
                    report.add(
                        .count(
                            "duplicate writes (server count)",
                            max(0, after.patchesApplied - before.patchesApplied - set.updates)
                                + max(0, after.messagesCreated - before.messagesCreated - set.messages)
                                + outcome.duplicatedMessages, mustBe: 0))
                    report.add(
                        .count(
                            "Retry-After violations (server count)",
                            after.retryAfterViolations - before.retryAfterViolations, mustBe: 0))
                    report.add(.count("dead changes", status["dead"]?.intValue ?? -1, mustBe: 0))
                    report.add(
                        Figure(
                            "time until every change was on the server",
                            String(
                                format: "%.1f s",
                                Double(drained.components.seconds) + Double(drained.components.attoseconds) / 1e18)))
                    report.add(.atMost("full syncs needed once the faults stopped", syncs, 2))
                    report.add(
                        .count("records differing from the server after the faults", convergence.mismatches, mustBe: 0))
                    report.notes += outcome.examples + convergence.examples
                }
            }
        }
    }
}
