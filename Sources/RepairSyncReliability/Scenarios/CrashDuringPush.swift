internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncModels
internal import RepairSyncProtocol

/// Scenario 1: changes queued through the socket, then the daemon killed with SIGKILL at random points of the push
/// and started again each time. Nothing may be lost, nothing duplicated (counted by the server), the store must
/// stay sound, and in the end the replica must equal the server.
public struct CrashDuringPush: Sendable {
    public var changes = 2000
    public var kills = 20
    public var seed: UInt64 = 1

    public init(changes: Int = 2000, kills: Int = 20, seed: UInt64 = 1) {
        self.changes = changes
        self.kills = kills
        self.seed = seed
    }

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("crash-push") { workspace in
            try await ScenarioReport.measure("crash during push") { report in
                try await ScenarioStack.with(workspace, orders: ChangeSet.ordersNeeded(for: changes)) {
                    server, daemon in
                    try await daemon.start()
                    _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                    _ = try await daemon.call("pause")
                    var set = ChangeSet(count: changes, tag: "crash-\(seed)")
                    try await set.apply(to: daemon)
                    let before = try await server.admin.counters()

                    var integrityFailures = 0
                    _ = try await daemon.call("sync")
                    // A kill after one or two progress reports of each restarted push (and a random few hundred
                    // microseconds): the status coalesces reports on a busy machine, so counting more of them lets a
                    // restarted push run far ahead, and every kill must land before the push ends.
                    var killer = RandomKills(kills: kills, gap: 2, random: SplitMix64(seed: seed))
                    let killed = try await killer.run(
                        daemon, progress: { $0["step"]?.stringValue == "pushing" }, finished: DaemonProcess.drained
                    ) {
                        if try StoreInspector.integrityCheck(daemon.storePath) != "ok" { integrityFailures += 1 }
                    }

                    // Let it finish: every change pushed, then a full pull so the replica can be compared.
                    guard try await daemon.waitForStatus(timeout: 300, DaemonProcess.drained) != nil else {
                        throw ScenarioFailure("the outbox did not drain: \(daemon.log().suffix(800))")
                    }
                    let final = try await daemon.call("status")
                    _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                    await daemon.stop()
                    let after = try await server.admin.counters()
                    let outcome = try await set.verify(on: server.admin)
                    let applied = after.patchesApplied - before.patchesApplied
                    let created = after.messagesCreated - before.messagesCreated
                    let convergence = try await Convergence.compare(store: daemon.storePath, server: server.admin)
                    await server.stop()

                    report.add(
                        Figure(
                            "changes queued", "\(set.changes.count) (\(set.updates) updates, \(set.messages) messages)")
                    )
                    report.add(.atLeast("SIGKILLs during the push", killed, kills))
                    report.add(.count("changes lost", outcome.lost, mustBe: 0))
                    report.add(
                        .count(
                            "duplicate writes (server count)",
                            max(0, applied - set.updates) + max(0, created - set.messages) + outcome.duplicatedMessages,
                            mustBe: 0))
                    report.add(
                        Figure(
                            "replays answered by the server", "\(after.idempotentReplays - before.idempotentReplays)"))
                    report.add(
                        .count(
                            "integrity_check failures",
                            integrityFailures + (try StoreInspector.integrityCheck(daemon.storePath) == "ok" ? 0 : 1),
                            mustBe: 0))
                    report.add(
                        .count(
                            "dead or failed changes",
                            (final["dead"]?.intValue ?? -1) + (final["failed"]?.intValue ?? -1), mustBe: 0))
                    report.add(.count("records differing from the server", convergence.mismatches, mustBe: 0))
                    report.notes += outcome.examples + convergence.examples
                    if applied < set.updates || created < set.messages {
                        report.notes.append(
                            "server applied \(applied)/\(set.updates) updates, created \(created)/\(set.messages) messages"
                        )
                    }
                }
            }
        }
    }
}
