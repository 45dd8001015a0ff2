import Foundation
import RepairSyncSimulation
import Testing

@Suite("Simulator: a batch in several sittings")
struct SimCheckpointTests {
    @Test("a batch stopped and taken up from its checkpoint adds up to the same figures as one run in one go")
    func resumedBatchAddsUp() async throws {
        let seeds: [UInt64] = Array(101...106)
        let whole = await Simulator.run(seeds: seeds, parallel: 2)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sim-checkpoint-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The first sitting does seeds 101, 103 and 104 (out of order, as parallel seeds end), then stops.
        var first = try SimCheckpoint.load(path: path, build: "build-a", first: 101, count: 6)
        #expect(first.remaining == seeds)
        for seed: UInt64 in [103, 101, 104] { first.record(await Simulator.run(seed: seed)) }
        first.seconds = 1
        try first.save(path: path)

        var second = try SimCheckpoint.load(path: path, build: "build-a", first: 101, count: 6)
        #expect(second.seedsDone == 3)
        #expect(second.done == [[101, 101], [103, 104]])
        #expect(second.remaining == [102, 105, 106])
        let rest = await Simulator.run(seeds: second.remaining, parallel: 2) { second.record($0) }
        #expect(rest.seeds == 3)
        #expect(second.remaining.isEmpty)
        #expect(second.done == [[101, 106]])
        #expect(second.seedsDone == whole.seeds)
        #expect(second.coverage == whole.coverage)
        #expect(second.failures.map(\.seed).sorted() == whole.failures.map(\.seed).sorted())
    }

    @Test("a checkpoint written by another build, or for another batch, is refused with the reason")
    func otherBuildRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sim-checkpoint-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try SimCheckpoint(build: "build-a", first: 1, count: 100).save(path: path)
        #expect(throws: SimCheckpoint.Mismatch.self) {
            try SimCheckpoint.load(path: path, build: "build-b", first: 1, count: 100)
        }
        #expect(throws: SimCheckpoint.Mismatch.self) {
            try SimCheckpoint.load(path: path, build: "build-a", first: 1, count: 50)
        }
        #expect(try SimCheckpoint.load(path: path, build: "build-a", first: 1, count: 100).build == "build-a")
    }
}
