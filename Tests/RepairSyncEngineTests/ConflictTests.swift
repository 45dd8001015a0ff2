import BackendTestSupport
import Foundation
import GRDB
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import Testing

/// The same record changed on both sides: every policy, three-way merges, deletions, skewed clocks, the audit log.
@Suite("Conflicts", .timeLimit(.minutes(2)))
struct ConflictTests {
    /// What each policy must leave on the server (and locally) when the server wrote the same field last.
    static let sameFieldCases: [(ConflictPolicy, String, ConflictRecord.Outcome)] = [
        (.serverWins, "remote notes", .keptRemote),
        (.clientWins, "local notes", .keptLocal),
        (.lastWriteWins, "remote notes", .keptRemote),
        (.merge, "remote notes", .keptRemote),
    ]

    @Test("the same field edited on both sides, under each automatic policy", arguments: sameFieldCases)
    func sameField(policy: ConflictPolicy, expected: String, outcome: ConflictRecord.Outcome) async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(policies: [.orders: policy])) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_20", fields: ["notes": "local notes"])
            try await Self.separateWriteTimes()
            try await h.serverEdit("orders", "ord_20", #"{"notes":"remote notes"}"#)

            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(report.conflicts == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_20").notes == expected)
            #expect(try h.local(Order.self, "ord_20")?.notes == expected)
            #expect(try h.engine.pendingChangesCount() == 0)

            let log = try h.engine.conflicts()
            #expect(log.count == 1)
            let entry = try #require(log.first)
            #expect(entry.collection == .orders)
            #expect(entry.recordId == "ord_20")
            #expect(entry.fields == ["notes"])
            #expect(entry.local["notes"] == "local notes")
            #expect(entry.remote["notes"] == "remote notes")
            #expect(entry.base["notes"] != nil)
            #expect(entry.policy == policy.rawValue)
            #expect(entry.outcome == outcome)
            #expect(!entry.isOpen)
            #expect(await h.engine.status.metrics.conflictsByOutcome[outcome.rawValue] == 1)
        }
    }

    @Test("different fields edited on both sides merge: both changes end up on the server and locally")
    func differentFieldsMerge() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.devices, id: "dev_4", fields: ["diagnosis": "local diagnosis"])
            try await h.serverEdit("devices", "dev_4", #"{"resolution":"remote resolution"}"#)

            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            let remote = try await h.serverRecord(Device.self, "devices", "dev_4")
            #expect(remote.diagnosis == "local diagnosis")
            #expect(remote.resolution == "remote resolution")
            let local = try #require(try h.local(Device.self, "dev_4"))
            #expect(local.diagnosis == "local diagnosis")
            #expect(local.resolution == "remote resolution")
            #expect(local.version == remote.version)
            #expect(try h.engine.conflicts().isEmpty, "nothing to decide, nothing logged")
        }
    }

    @Test(
        "manual: another program's edit of a record whose conflict waits, queued with queueChange, is held with it and shown in the conflict's local side"
    )
    func queuedChangeWaitsWithTheConflict() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(policies: [.orders: .manual])) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_21", fields: ["notes": "local notes"])
            try await h.serverEdit("orders", "ord_21", #"{"notes":"remote notes"}"#)
            #expect(await h.engine.performFullSync().succeeded)
            let before = await h.engine.status
            #expect(before.openConflicts == 1 && before.held == 1)

            try await h.store.write { db in
                try db.execute(sql: "UPDATE orders SET status = 'ready' WHERE id = 'ord_21'")
            }
            let result = try await h.engine.queueChange(.orderUpdated, id: "ord_21")
            guard case .queued(_, let fields) = result else {
                Issue.record("not queued: \(result)")
                return
            }
            #expect(fields == ["status"])
            #expect(await h.engine.status.held == 2, "the new change waits with the conflict")
            let open = try #require(try h.engine.conflicts(openOnly: true).first)
            #expect(open.local["status"] == .some("ready"), "the person deciding sees it: \(open.local)")
            #expect(await h.engine.performFullSync().pushed == 0, "nothing sent before the decision")
        }
    }

    @Test("manual: the change waits for a person, others go on; keep local pushes it and logs the decision")
    func manualKeepLocal() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(policies: [.orders: .manual])) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_21", fields: ["notes": "local notes"])
            try await h.engine.update(.orders, id: "ord_22", fields: ["notes": "unrelated"])
            try await h.serverEdit("orders", "ord_21", #"{"notes":"remote notes"}"#)

            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_22").notes == "unrelated")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_21").notes == "remote notes")
            #expect(try h.local(Order.self, "ord_21")?.notes == "local notes", "the local value waits, visible")
            let status = await h.engine.status
            #expect(status.openConflicts == 1)
            #expect(status.held == 1)
            #expect(try h.engine.pendingChangesCount() == 1, "a held change is still pending")
            let open = try #require(try h.engine.conflicts(openOnly: true).first)
            #expect(open.outcome == .awaitingDecision)
            #expect(open.fields == ["notes"])
            #expect(open.remote["notes"] == "remote notes")

            // Nothing is pushed for it until someone decides.
            #expect(await h.engine.performFullSync().pushed == 0)
            try await h.engine.resolveConflict(id: open.id, .keepLocal)
            #expect(await h.engine.performFullSync().pushed == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_21").notes == "local notes")
            let decided = try #require(try h.engine.conflicts().first { $0.id == open.id })
            #expect(!decided.isOpen)
            #expect(decided.outcome == .keptLocal)
            #expect(decided.resolvedAt != nil)
            #expect(await h.engine.status.openConflicts == 0)
        }
    }

    @Test("manual: a per-field decision keeps one local field and takes the other from the server")
    func manualPerField() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(policies: [.devices: .manual])) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(
                .devices, id: "dev_5", fields: ["diagnosis": "local diagnosis", "resolution": "local resolution"])
            try await h.serverEdit(
                "devices", "dev_5", #"{"diagnosis":"remote diagnosis","resolution":"remote resolution"}"#)
            #expect(await h.engine.performFullSync().succeeded)
            let open = try #require(try h.engine.conflicts(openOnly: true).first)
            #expect(open.fields == ["diagnosis", "resolution"])

            try await h.engine.resolveConflict(id: open.id, .perField(["diagnosis": true, "resolution": false]))
            #expect(try h.local(Device.self, "dev_5")?.resolution == "remote resolution")
            #expect(await h.engine.performFullSync().pushed == 1)
            let remote = try await h.serverRecord(Device.self, "devices", "dev_5")
            #expect(remote.diagnosis == "local diagnosis")
            #expect(remote.resolution == "remote resolution")
            #expect(try h.engine.conflicts().first { $0.id == open.id }?.outcome == .merged)
        }
    }

    @Test("a pending update of a record deleted on the server: local values go to the log, the entry is dropped")
    func deletedOnServerWhilePending() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_23", fields: ["notes": "about to vanish"])
            try await h.serverDelete("orders", "ord_23")

            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(try h.engine.pendingChangesCount() == 0)
            #expect(try h.local(Order.self, "ord_23") == nil)
            #expect(
                try h.integer("SELECT COUNT(*) FROM devices WHERE order_id = 'ord_23'") == 0,
                "the order's devices went with it")
            let logged = try #require(try h.engine.conflicts().first)
            #expect(logged.recordId == "ord_23")
            #expect(logged.outcome == .deletedRemotely)
            #expect(logged.local["notes"] == "about to vanish")
        }
    }

    @Test("a tombstone pulled for an order whose device has a pending change: the change is logged, not lost silently")
    func tombstoneWithPendingChild() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let row = try h.strings("SELECT order_id, id FROM devices ORDER BY id LIMIT 1 OFFSET 7")
            try #require(row.count == 2)
            let (orderId, deviceId) = (row[0], row[1])
            try await h.serverDelete("orders", orderId)
            // The device is edited locally after the push and before the orders' page arrives.
            let engine = h.engine
            let edited = h.recorder.once(when: { if case .pageApplied(.clients, _, _, _) = $0 { true } else { false } })
            {
                _ = try? engine.changes.update(.devices, id: deviceId, fields: ["diagnosis": "late note"])
            }
            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(edited.fired)
            #expect(try h.local(Order.self, orderId) == nil)
            #expect(try h.local(Device.self, deviceId) == nil)
            #expect(try h.engine.pendingChangesCount() == 0)
            let logged = try #require(try h.engine.conflicts().first { $0.recordId == deviceId })
            #expect(logged.outcome == .deletedRemotely)
            #expect(logged.local["diagnosis"] == "late note")
        }
    }

    @Test(
        "last-write-wins is decided on the server's clock: a workstation an hour off does not flip it",
        arguments: [3_600_000, -3_600_000] as [Int64])
    func skewedClock(skew: Int64) async throws {
        let configuration = EngineHarness.configuration(policies: [.orders: .lastWriteWins])
        try await EngineHarness.with(configuration: configuration, clock: SystemEngineClock(skewMilliseconds: skew)) {
            h in
            #expect(await h.engine.performFullSync().succeeded)
            // Measured at the midpoint of the health check: off by up to half its round trip, which a loaded machine
            // stretches (2.2 s once under CI's own load). The hour is what must be corrected.
            let error = abs(h.engine.api.clockOffsetMilliseconds - skew)
            #expect(error < 60_000, "offset measured: \(h.engine.api.clockOffsetMilliseconds)")
            // Ahead by an hour: the local edit is older but its clock says newer. Behind: the other way round. The
            // writes are further apart than the offset is off, so that only the hour could flip the decision.
            let localFirst = skew > 0
            let apart = Duration.milliseconds(max(300, error + 500))
            if localFirst {
                try await h.engine.update(.orders, id: "ord_24", fields: ["notes": "local notes"])
                try await Self.separateWriteTimes(apart)
                try await h.serverEdit("orders", "ord_24", #"{"notes":"remote notes"}"#)
            } else {
                try await h.serverEdit("orders", "ord_24", #"{"notes":"remote notes"}"#)
                try await Self.separateWriteTimes(apart)
                try await h.engine.update(.orders, id: "ord_24", fields: ["notes": "local notes"])
            }
            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            let winner = localFirst ? "remote notes" : "local notes"
            #expect(try await h.serverRecord(Order.self, "orders", "ord_24").notes == winner)
            #expect(try h.local(Order.self, "ord_24")?.notes == winner)
            #expect(try h.engine.conflicts().first?.outcome == (localFirst ? .keptRemote : .keptLocal))
        }
    }

    /// Last-write-wins needs two writes whose times differ by more than the offset measurement error (< 1 ms on
    /// loopback, at most half a round trip under load): this puts real time between them. It waits for nothing and
    /// synchronises nothing.
    static func separateWriteTimes(_ apart: Duration = .milliseconds(300)) async throws {
        try await Task.sleep(for: apart)
    }
}
