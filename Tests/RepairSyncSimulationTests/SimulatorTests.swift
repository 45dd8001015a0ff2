import Foundation
import RepairSyncSimulation
import Testing

@Suite("Simulator")
struct SimulatorTests {
    @Test("a seed replays exactly: the same operations, the same trace")
    func replaysExactly() async throws {
        let first = await Simulator.run(seed: 42, tracing: true)
        let second = await Simulator.run(seed: 42, tracing: true)
        #expect(first.operations == second.operations)
        #expect(first.trace == second.trace)
        let replayed = await Simulator.replay(seed: 42, operations: first.operations, tracing: true)
        #expect(replayed.trace == first.trace)
    }

    @Test("2,000 seeds: every invariant holds")
    func seeds() async throws {
        let batch = await Simulator.run(seeds: Array(1...2000).filter { Simulator.openBugs[$0] == nil }, parallel: 2)
        print("\(batch.seeds) seeds in \(String(format: "%.1f", batch.seconds)) s")
        for failure in batch.failures.prefix(3) {
            let shrunk = await Simulator.shrink(failure, budget: 150)
            Issue.record(
                "seed \(failure.seed): \(failure.violations.first ?? "")\n\(shrunk.trace.joined(separator: "\n"))")
        }
        #expect(batch.failures.isEmpty, "\(batch.failures.map(\.seed))")
    }

    /// Shrunk operation lists of seeds that found bugs, replayed as they were found: each failed before its fix.
    static let regressions: [(seed: UInt64, bug: String, operations: [SimOperation])] = [
        (
            421, "a change refused after a later edit of the same field kept that field; retried, it overwrote the later value",
            [
                .startSync(.full), .deliver(.stalePage(back: 61)), .deliver(.serverError(503)), .deliver(.normal),
                .deliver(.cursorExpired), .deliver(.cursorExpired), .deliver(.normal), .deliver(.unreachable),
                .localUpdate(devices: false, record: 9, field: 52, value: 4),
                .localUpdate(devices: true, record: 50, field: 37, value: 24),
                .startSync(.pushOnly), .deliver(.normal), .deliver(.normal), .deliver(.serverError(503)),
                .advance(milliseconds: 90000), .localUpdate(devices: true, record: 24, field: 19, value: 13),
                .startSync(.partial(mask: 2)), .deliver(.normal), .deliver(.refused), .retryDead(index: 14),
            ]
        ),
        (
            1056, "a resync that started again from the beginning kept the marks of its first start: a message pushed in between and lost by a server restore stayed as a ghost",
            [
                .processCrash(event: 6, count: 2), .startSync(.full), .deliver(.normal), .startSync(.full),
                .deliver(.truncated), .decideConflict(index: 31, keepLocal: false), .deliver(.normal),
                .deliver(.normal), .deliver(.normal), .deliver(.cursorExpired), .deliver(.serverError(503)),
                .deliver(.lostResponse), .localMessage(ticket: 41, content: 56, sameIdAsLast: false),
                .discardDead(index: 22), .processCrash(event: 3, count: 3), .serverRestore(backup: 33),
            ]
        ),
        (
            1289, "a shop tool inserted an order under a client whose create was dead; discarding the client left the order, which the next run sent to a server that never had its client",
            [
                .localCreate(kind: 39, parent: 14, devices: 46), .localCreate(kind: 29, parent: 0, devices: 13),
                .startSync(.partial(mask: 24)), .deliver(.normal), .deliver(.refused),
                .toolInsert(kind: 40, parent: 49), .discardDead(index: 15),
            ]
        ),
    ]

    @Test("the seeds that found bugs replay clean", arguments: regressions.indices)
    func regression(_ index: Int) async {
        let (seed, bug, operations) = Self.regressions[index]
        let result = await Simulator.replay(seed: seed, operations: operations)
        #expect(result.violations.isEmpty, "seed \(seed) (\(bug)): \(result.violations)")
    }

    @Test("open bugs the simulator found still fail (known issues, to fix)", arguments: Simulator.openBugs.keys.sorted())
    func openBug(_ seed: UInt64) async {
        let result = await Simulator.run(seed: seed)
        withKnownIssue("seed \(seed): \(Simulator.openBugs[seed]!)") {
            #expect(result.violations.isEmpty, "\(result.violations)")
        }
    }
}
