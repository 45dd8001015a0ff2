import BackendTestSupport
import Foundation
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// Runs and the status they publish: never stuck in syncing, single flight with one follow-up.
@Suite("Runs and status", .timeLimit(.minutes(2)))
struct RunAndStatusTests {
    @Test("status goes idle → syncing → completed → idle, in that order, and pull progress only grows to 1")
    func transitions() async throws {
        try await EngineHarness.with { h in
            let updates = await h.engine.statusUpdates()
            let watcher = Task { () -> [EngineStatus.Phase] in
                var phases: [EngineStatus.Phase] = []
                var sawCompleted = false
                for await status in updates {
                    phases.append(status.phase)
                    if status.phase == .completed { sawCompleted = true }
                    if sawCompleted, status.phase == .idle { break }
                }
                return phases
            }
            let report = await h.engine.performFullSync()
            #expect(report.succeeded, "\(report.stop ?? "")")
            let phases = await watcher.value

            var names: [String] = []
            for phase in phases where names.last != phase.name { names.append(phase.name) }
            #expect(names == ["idle", "syncing", "completed", "idle"])

            let pulling = phases.compactMap { phase -> Double? in
                if case .syncing(.pulling, let progress) = phase { return progress }
                return nil
            }
            #expect(!pulling.isEmpty)
            #expect(zip(pulling, pulling.dropFirst()).allSatisfy { $0 <= $1 }, "\(pulling)")
            #expect(pulling.last == 1)
            #expect(pulling.allSatisfy { (0...1).contains($0) })
            let status = await h.engine.status
            #expect(status.lastSuccessAt != nil)
            #expect(status.metrics.runs == 1)
            #expect(status.metrics.lastDurationMilliseconds != nil)
        }
    }

    @Test("requests made during a run are coalesced into exactly one follow-up run")
    func singleFlight() async throws {
        try await EngineHarness.with { h in
            // Hold the first run in its first request for a moment, long enough for the others to arrive.
            try await h.faultPlan(#"{"rate":0,"kinds":{},"slow_ms":1500}"#)
            try await h.fault("slow", method: "GET", path: "/api/v1/clients/changes")
            let updates = await h.engine.statusUpdates()
            let engine = h.engine
            let first = Task { await engine.performFullSync() }
            for await status in updates where status.phase.name == "syncing" { break }

            let reports = await withTaskGroup(of: SyncReport.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        index.isMultiple(of: 2) ? await engine.performFullSync() : await engine.sync([.orders])
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let firstReport = await first.value
            #expect(firstReport.run == 1)
            #expect(Set(reports.map(\.run)) == [2], "\(reports.map(\.run))")
            #expect(reports.allSatisfy { $0.succeeded })
            let status = await h.engine.status
            #expect(status.metrics.runs == 2)
            // The follow-up covers the union of what was asked: every collection and the dashboard.
            #expect(Set(reports[0].pulled.keys) == Set(SyncCollection.allCases.map(\.name)))
        }
    }

    @Test("an unreachable API puts the engine offline, not in an error loop, and keeps every change")
    func offline() async throws {
        let directory = try TemporaryDirectory(prefix: "engine-offline")
        let store = try ReplicaStore.open(at: directory.path("replica.sqlite"))
        let order = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        try await store.write { db in try order.upsert(db, syncedAt: .now()) }
        // A port nothing listens on: connection refused.
        let api = APIClient(configuration: .init(baseURL: "http://127.0.0.1:9", token: "t"))
        let engine = try SyncEngine(store: store, api: api, configuration: EngineHarness.configuration())
        try await engine.update(.orders, id: order.id, fields: ["notes": "written offline"])

        let report = await engine.performFullSync()
        #expect(report.offline)
        #expect(report.stop?.contains("offline") == true, "\(report.stop ?? "")")
        #expect(await engine.status.phase == .offline)
        let entries = try engine.outboxEntries()
        #expect(entries.count == 1)
        #expect(entries.first?.state == .pending)
        #expect(entries.first?.attempts == 0, "being offline is not a failed attempt")
        #expect(try engine.pendingChangesCount() == 1)
        #expect(await engine.status.metrics.failures == 1)
    }
}

/// Stopping for shutdown.
@Suite("Stopping", .timeLimit(.minutes(2)))
struct StopTests {
    @Test("stop() ends a run at the next request boundary with everything committed, and refuses new runs")
    func stopDuringPull() async throws {
        try await EngineHarness.with(orders: 100) { h in
            let engine = h.engine
            // Ask to stop as soon as the first page is committed.
            h.recorder.onEvent { event in
                if case .pageApplied = event { engine.requestStop() }
            }
            let report = await engine.performFullSync()
            #expect(report.stop == "stopped")
            #expect(await engine.status.phase == .idle, "stopping is not an error")
            #expect(h.recorder.pagesApplied.values.reduce(0, +) == 1, "the run ended at the first page boundary")
            let integrity = try h.strings("PRAGMA integrity_check")
            #expect(integrity == ["ok"])
            await engine.stop()
            let next = await engine.performFullSync()
            #expect(next.stop == "stopped")
            #expect(next.pulled.isEmpty)
        }
    }
}
