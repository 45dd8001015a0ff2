internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncProtocol
internal import Synchronization

/// Scenario 9: many clients on the socket at once — half making changes (`updateOrder`, or a direct write of the
/// replica followed by `queueChange`), half reading `status`, each on its own connection as fast as answers come — while the daemon pulls the whole data set again and again (the server's
/// cursors expired, so every run is a full resync) and pushes what the clients queue. Every request must be
/// answered without an error, every acknowledged change must reach the server, and the latency is reported.
public struct Load: Sendable {
    public var clients = 50
    public var seconds = 60
    public var orders = 3000

    public init(clients: Int = 50, seconds: Int = 60, orders: Int = 3000) {
        self.clients = clients
        self.seconds = seconds
        self.orders = orders
    }

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("load") { workspace in
            try await ScenarioReport.measure("load") { report in
                try await ScenarioStack.with(workspace, orders: orders, pageSize: 500) { server, daemon in
                    daemon.environment["REPAIRSYNCD_SYNC_PUSH_DEBOUNCE"] = "200ms"
                    try await daemon.start()
                    _ = try await daemon.call("sync", .object(["wait": .bool(true)]))

                    let deadline = ContinuousClock.now + .seconds(seconds)
                    // The sync that runs meanwhile: full resyncs back to back.
                    async let resyncs: Int = {
                        var count = 0
                        while ContinuousClock.now < deadline {
                            _ = try await server.admin.send("POST", "/admin/cursors/expire")
                            _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                            count += 1
                        }
                        return count
                    }()
                    let results = try await withThrowingTaskGroup(of: ClientResult.self) { group in
                        for client in 0..<clients {
                            let path = daemon.socketPath
                            let records = orders
                            let clientCount = clients
                            let store = daemon.storePath
                            group.addTask {
                                try await Blocking.run {
                                    Self.client(
                                        client, of: clientCount, records: records, path: path, store: store,
                                        until: deadline)
                                }
                            }
                        }
                        var all: [ClientResult] = []
                        for try await result in group { all.append(result) }
                        return all
                    }
                    let resyncCount = try await resyncs
                    guard try await daemon.waitForStatus(timeout: 300, DaemonProcess.drained) != nil else {
                        throw ScenarioFailure("the outbox did not drain after the load: \(daemon.log().suffix(600))")
                    }
                    await daemon.stop()
                    let serverOrders = try await server.admin.allRecords("orders")
                    var lost = 0
                    for result in results {
                        for (id, notes) in result.lastNotes where serverOrders[id]?["notes"] as? String != notes {
                            lost += 1
                            if report.notes.count < 5 {
                                let local = try? StoreInspector.strings(
                                    daemon.storePath, "SELECT coalesce(notes, 'NULL') FROM orders WHERE id = '\(id)'")
                                report.notes.append(
                                    "\(id): acknowledged \"\(notes)\", server \"\(serverOrders[id]?["notes"] as? String ?? "nil")\", local \(local ?? [])"
                                )
                            }
                        }
                    }
                    await server.stop()

                    let changes = results.flatMap(\.changeLatencies).sorted()
                    let statuses = results.flatMap(\.statusLatencies).sorted()
                    let errors = results.reduce(0) { $0 + $1.errors }
                    func p(_ values: [Double], _ q: Double) -> String {
                        values.isEmpty
                            ? "-" : String(format: "%.1f", values[min(values.count - 1, Int(Double(values.count) * q))])
                    }
                    report.add(
                        Figure("clients / seconds / full resyncs meanwhile", "\(clients) / \(seconds) / \(resyncCount)")
                    )
                    report.add(
                        Figure(
                            "requests served",
                            "\(changes.count + statuses.count) (\(changes.count) changes, \(statuses.count) status)"))
                    report.add(.count("errors", errors, mustBe: 0))
                    report.add(
                        Figure(
                            "queueChange answered nothing to queue (a run had pushed the edit)",
                            "\(results.reduce(0) { $0 + $1.alreadyOnServer })"))
                    report.add(Figure("change acknowledged, p50 / p99 ms", "\(p(changes, 0.5)) / \(p(changes, 0.99))"))
                    report.add(Figure("status, p50 / p99 ms", "\(p(statuses, 0.5)) / \(p(statuses, 0.99))"))
                    report.add(.count("acknowledged changes not on the server", lost, mustBe: 0))
                    report.notes += results.compactMap(\.firstError).prefix(3)
                }
            }
        }
    }

    struct ClientResult: Sendable {
        var changeLatencies: [Double] = []
        var statusLatencies: [Double] = []
        var errors = 0
        var firstError: String?
        /// `queueChange` answers "nothing to queue": a run had pushed the row's edit before the call came.
        var alreadyOnServer = 0
        /// The last acknowledged notes of each order this client changed.
        var lastNotes: [String: String] = [:]
    }

    /// One client on one connection: odd ones read `status`; even ones change their own orders' notes, half of
    /// them with `updateOrder`, the other half as a shop tool would — writing the replica's row directly, then
    /// `queueChange` (which diffs the row against what the daemon knows and queues the difference).
    static func client(
        _ index: Int, of count: Int, records: Int, path: String, store: String, until deadline: ContinuousClock.Instant
    ) -> ClientResult {
        var result = ClientResult()
        let tool = index % 4 == 2 ? try? ExternalWriter(path: store) : nil
        guard let connection = try? ControlClient(path: path) else {
            result.errors += 1
            result.firstError = "client \(index) could not connect"
            return result
        }
        var n = 0
        while ContinuousClock.now < deadline {
            n += 1
            let start = ContinuousClock.now
            do {
                if index % 2 == 0 {
                    // Orders index+1, index+1+count, …: no two clients share one.
                    let id = "ord_\((index + (n % 20) * count) % records + 1)"
                    let notes = "load \(index) \(n)"
                    if let tool {
                        try tool.setNotes(notes, order: id)
                        let reply = try connection.call(
                            "queueChange", .object(["kind": .string("order-updated"), "id": .string(id)]))
                        // `on_server` is an answer too: a sync run found the row changed and pushed it before the
                        // call came, so the row is the server's copy. Whether the edit did reach the server is what
                        // the check after the load tells, as for every other acknowledged change.
                        switch (reply["queued"], reply["outcome"]?.stringValue) {
                        case (.bool(true), "queued"), (.bool(true), "already_queued"): break
                        case (.bool(false), "on_server"): result.alreadyOnServer += 1
                        default: throw ScenarioFailure("queueChange answered \(reply.serialized)")
                        }
                    } else {
                        _ = try connection.call("updateOrder", .object(["id": .string(id), "notes": .string(notes)]))
                    }
                    result.lastNotes[id] = notes
                    result.changeLatencies.append(milliseconds(ContinuousClock.now - start))
                } else {
                    _ = try connection.call("status")
                    result.statusLatencies.append(milliseconds(ContinuousClock.now - start))
                }
            } catch {
                result.errors += 1
                result.firstError = result.firstError ?? "client \(index): \(error)"
            }
        }
        return result
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
