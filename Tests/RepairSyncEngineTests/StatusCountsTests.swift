import BackendTestSupport
import Foundation
import GRDB
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Synchronization
import Testing

@testable import RepairSyncEngine

/// The outbox and conflict counts in the status: read with the generation the store's triggers raise, so that the
/// status never shows older counts after newer ones, wherever each was read (a reader, or a group commit's own
/// transaction after its changes).
@Suite("Status counts", .timeLimit(.minutes(2)))
struct StatusCountsTests {
    @Test(
        "the generation moves with every change of the outbox's states and of the conflict log, and with nothing else")
    func generationFollowsTheCounts() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            func generation() throws -> Int64 { try h.store.read { db in try StatusCounts.read(db).generation } }
            let start = try generation()
            try h.writeRow("orders", "ord_1", ["notes": "edited at the counter"])
            #expect(try generation() == start, "a record's edit is not a count's change")
            _ = try await h.engine.queueChange(.orderUpdated, id: "ord_1")
            let queued = try generation()
            #expect(queued > start, "an entry added")
            try await h.store.write { db in try db.execute(sql: "UPDATE outbox SET attempts = attempts + 1") }
            #expect(try generation() == queued, "an entry's other columns are not its state")
            try await h.store.write { db in try db.execute(sql: "UPDATE outbox SET state = 'failed'") }
            let failed = try generation()
            #expect(failed > queued, "an entry moved to another state")
            try await h.store.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO conflicts (collection, record_id, fields, base, local, remote, policy, outcome, state,
                                               detected_at)
                        VALUES ('orders', 'ord_1', '[]', '{}', '{}', '{}', 'manual', 'awaiting_decision', 'open', 0)
                        """)
            }
            let logged = try generation()
            #expect(logged > failed, "a conflict logged")
            try await h.store.write { db in
                try db.execute(sql: "UPDATE conflicts SET state = 'resolved', outcome = 'kept_local'")
            }
            let decided = try generation()
            #expect(decided > logged, "a conflict decided")
            try await h.store.write { db in try db.execute(sql: "DELETE FROM outbox") }
            #expect(try generation() > decided, "an entry removed")
        }
    }

    @Test("counts older than the status's are not shown over them; newer ones are")
    func olderCountsAreNotShown() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try await h.store.read { db in try StatusCounts.read(db) }
            try h.writeRow("orders", "ord_1", ["notes": "edited at the counter"])
            _ = try await h.engine.queueChange(.orderUpdated, id: "ord_1")
            #expect(await h.engine.status.pending == 1)
            // A reading taken before the change arrives late (as a reader's can): the status keeps the newer count.
            await h.engine.show(before)
            #expect(await h.engine.status.pending == 1)
            var newer = try await h.store.read { db in try StatusCounts.read(db) }
            newer.generation += 1
            newer.outbox.pending = 7
            await h.engine.show(newer)
            #expect(await h.engine.status.pending == 7)
            await h.engine.refreshCounts()
            #expect(await h.engine.status.pending == 7, "a re-read of an older generation leaves the counts as shown")
        }
    }

    @Test("queueChange from 25 tasks, with the counts re-read all along: the pending count shown only ever rises")
    func pendingNeverGoesBack() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let ids = (1...25).map { "ord_\($0)" }
            for id in ids { try h.writeRow("orders", id, ["notes": "counter note for \(id)"]) }
            let updates = await h.engine.statusUpdates()
            let shown = Task {
                var pending: [Int] = []
                for await status in updates {
                    pending.append(status.pending)
                    if status.pending == ids.count { break }
                }
                return pending
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in ids {
                    group.addTask { _ = try await h.engine.queueChange(.orderUpdated, id: id) }
                    group.addTask { await h.engine.refreshCounts(recounting: []) }
                }
                try await group.waitForAll()
            }
            let pending = await shown.value
            #expect(pending.last == ids.count)
            #expect(pending == pending.sorted(), "never lower than a count shown before: \(pending)")
        }
    }
}
