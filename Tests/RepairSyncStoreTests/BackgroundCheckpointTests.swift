import Foundation
import GRDB
import RepairSyncTestSupport
import Synchronization
import Testing

@testable import RepairSyncStore

/// WAL checkpoints beside the writer (`BackgroundCheckpoints`): a commit that takes the WAL past the threshold (4,000
/// frames) does not copy it back itself; a connection of its own does, and the WAL then starts again from its
/// beginning; only a WAL twice that long is checkpointed by a commit.
@Suite("Background checkpoints", .serialized, .timeLimit(.minutes(1)))
struct BackgroundCheckpointTests {
    /// Commits one row of 3 kB at a time (a new table page each, so a frame or two per commit) until the WAL holds
    /// `frames` frames; returns the largest size the WAL had after a commit.
    func commit(_ store: ReplicaStore, untilWALHas frames: Int32, from n: inout Int) throws -> Int32 {
        let checkpoints = try #require(store.checkpoints)
        var largest: Int32 = 0
        repeat {
            largest = max(largest, try commitRow(store, &n))
        } while checkpoints.walPages.load(ordering: .relaxed) < frames && n < 20_000
        return largest
    }

    /// Commits row `n + 1`; returns the WAL's size after it.
    func commitRow(_ store: ReplicaStore, _ n: inout Int) throws -> Int32 {
        n += 1
        let row = n
        try store.write { db in
            try db.execute(sql: "INSERT INTO scratch (n, filler) VALUES (?, zeroblob(3000))", arguments: [row])
        }
        return try #require(store.checkpoints).walPages.load(ordering: .relaxed)
    }

    func store(_ dir: TemporaryDirectory) throws -> ReplicaStore {
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        try store.write { db in try db.execute(sql: "CREATE TABLE scratch (n INTEGER PRIMARY KEY, filler BLOB)") }
        return store
    }

    @Test(
        "past the threshold the commits go on without checkpointing; the checkpoint runs beside them, then the WAL starts again"
    )
    func checkpointsBesideTheWriter() throws {
        let dir = try TemporaryDirectory()
        let store = try store(dir)
        let checkpoints = try #require(store.checkpoints)
        var n = 0
        // Held: any checkpoint asked for waits, so a commit that checkpointed itself would show as a WAL that
        // started again (SQLite's automatic checkpoint at 1,000 frames, then a restart at the next write).
        let beyond = BackgroundCheckpoints.threshold + 500
        let largest = try checkpoints.holding { try commit(store, untilWALHas: beyond, from: &n) }
        #expect(
            largest >= beyond, "no commit checkpointed the WAL (SQLite's own automatic checkpoint is at 1,000 frames)")
        #expect(checkpoints.completed.load(ordering: .relaxed) == 0)
        checkpoints.drain()
        #expect(checkpoints.completed.load(ordering: .relaxed) == 1, "one checkpoint asked for, and run")
        try store.write { db in try db.execute(sql: "INSERT INTO scratch (n) VALUES (-1)") }
        #expect(checkpoints.walPages.load(ordering: .relaxed) < 10, "the WAL started again from its beginning")
        let rows = try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM scratch") }
        #expect(rows == n + 1)
        try store.close()
    }

    @Test("a WAL twice as long is checkpointed by the commit itself, so it stays bounded")
    func inlineCheckpointBoundsTheWAL() throws {
        let dir = try TemporaryDirectory()
        let store = try store(dir)
        let checkpoints = try #require(store.checkpoints)
        var n = 0
        let largest = try checkpoints.holding {
            _ = try commit(store, untilWALHas: BackgroundCheckpoints.inlineThreshold - 10, from: &n)
            // Past the inline threshold the commit copies the WAL back; the next write starts it again.
            var largest: Int32 = 0
            for _ in 0..<40 { largest = max(largest, try commitRow(store, &n)) }
            return largest
        }
        #expect(largest < BackgroundCheckpoints.inlineThreshold + 10, "never much past the inline threshold")
        #expect(checkpoints.walPages.load(ordering: .relaxed) < 1_000, "checkpointed inline and started again")
        try store.close()
    }

    @Test("closing the store closes the checkpoints' connection: none opens the file after it is removed")
    func closedStoreOpensNothing() throws {
        let dir = try TemporaryDirectory()
        let store = try store(dir)
        let checkpoints = try #require(store.checkpoints)
        var n = 0
        try checkpoints.holding { _ = try commit(store, untilWALHas: BackgroundCheckpoints.threshold + 100, from: &n) }
        try store.close()
        _ = ReplicaStore.removeFiles(at: dir.path("replica.sqlite"))
        checkpoints.drain()
        #expect(!FileManager.default.fileExists(atPath: dir.path("replica.sqlite")), "no empty database made again")
    }
}
