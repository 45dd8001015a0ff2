internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncModels
internal import RepairSyncProtocol

/// Scenario 2: a large initial sync, the daemon killed with SIGKILL at random pages and started again each time.
/// The server counts pages it serves again (same collection and cursor): after each restart at most two per
/// collection — the page being applied and the one the daemon had fetched ahead, or the caught-up cursor a finished
/// collection asks again — and at the end the replica equals the server.
public struct CrashDuringPull: Sendable {
    public var orders = 2000
    public var pageSize = 100
    public var kills = 8
    public var seed: UInt64 = 1

    public init(orders: Int = 2000, pageSize: Int = 100, kills: Int = 8, seed: UInt64 = 1) {
        self.orders = orders
        self.pageSize = pageSize
        self.kills = kills
        self.seed = seed
    }

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("crash-pull") { workspace in
            try await ScenarioReport.measure("crash during pull") { report in
                try await ScenarioStack.with(workspace, orders: orders, pageSize: pageSize) { server, daemon in
                    // What `--seed` makes: devices 1.5×, clients ½×, tickets ½× and four messages per ticket.
                    let records = orders + orders * 3 / 2 + orders / 2 + orders / 2 + 4 * (orders / 2)
                    let pages = records / pageSize
                    var worstRepeats = 0
                    var repeatsTotal = 0
                    var previous = try await server.admin.counters()
                    func countRepeats() async throws {
                        let now = try await server.admin.counters()
                        for (collection, count) in now.pagesRepeated {
                            let delta = count - (previous.pagesRepeated[collection] ?? 0)
                            worstRepeats = max(worstRepeats, delta)
                            repeatsTotal += delta
                        }
                        previous = now
                    }
                    try await daemon.start()
                    var killer = RandomKills(
                        kills: kills, gap: max(2, pages / max(1, kills + 1)), random: SplitMix64(seed: seed))
                    let killed = try await killer.run(
                        daemon, progress: { $0["step"]?.stringValue == "pulling" },
                        finished: { $0["lastSuccessAt"]?.stringValue != nil }, afterKill: countRepeats)
                    guard
                        try await daemon.waitForStatus(timeout: 600, { $0["lastSuccessAt"]?.stringValue != nil }) != nil
                    else {
                        throw ScenarioFailure("the initial sync did not finish: \(daemon.log().suffix(800))")
                    }
                    try await countRepeats()
                    await daemon.stop()
                    let served = previous.pagesServed.values.reduce(0, +)
                    let convergence = try await Convergence.compare(store: daemon.storePath, server: server.admin)
                    let integrity = try StoreInspector.integrityCheck(daemon.storePath)
                    await server.stop()

                    report.add(
                        Figure("records on the server", "\(convergence.records) (\(pages) pages of \(pageSize))"))
                    report.add(.atLeast("SIGKILLs during the pull", killed, kills))
                    report.add(Figure("pages served in all", "\(served)"))
                    report.add(Figure("pages served again in all", "\(repeatsTotal)"))
                    // The page being applied and the one fetched ahead of it (docs/architecture.md, "Pull").
                    report.add(.atMost("pages served again per collection per restart (worst)", worstRepeats, 2))
                    report.add(.check("integrity_check", integrity == "ok", integrity))
                    report.add(.count("records differing from the server", convergence.mismatches, mustBe: 0))
                    report.notes += convergence.examples
                }
            }
        }
    }
}
