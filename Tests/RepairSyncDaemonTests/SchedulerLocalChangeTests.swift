import BackendTestSupport
import RepairAPIDev
import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncModels
import Testing

/// Local changes reach the scheduler as one event per burst (concurrent callers share the one waiting in its
/// mailbox): no change may be left without a push planned for it.
@Suite("Scheduler: local changes", .timeLimit(.minutes(2)))
struct SchedulerLocalChangeTests {
    @Test(
        "bursts of changes from 20 concurrent callers, one after another: each burst is pushed soon, none waits for the periodic run"
    )
    func burstsArePushed() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 30)) { backend in
            // The periodic run is an hour away: only the local-change trigger can push within the test's limit.
            let settings = """
                sync:
                  interval: 1h
                  push_debounce: 20ms
                probe:
                  mode: poll
                """
            try await SchedulerHarness.with(backend, settings: settings) { h in
                let (engine, scheduler) = (h.engine, h.scheduler)
                try await h.wait("the first sync") { $0.lastSuccessAt != nil && $0.pending == 0 }
                for burst in 1...3 {
                    // 20 callers at once, as shop tools write rows and call queueChange (here: an edit, then the
                    // notice), each with its own order.
                    try await withThrowingTaskGroup(of: Void.self) { callers in
                        for caller in 1...20 {
                            callers.addTask {
                                try await engine.update(
                                    .orders, id: "ord_\(caller)", fields: ["notes": "burst \(burst)"])
                                await scheduler.localChange()
                            }
                        }
                        try await callers.waitForAll()
                    }
                    // (No count of pending here: 20 ms after a caller's notice the push may already have taken some.)
                    // Subscribed once every caller was acknowledged: no status from before the burst (a run that
                    // started before it, left from the last burst's late notices, ends with 0 pending too).
                    try await h.wait("burst \(burst) pushed", fresh: true) {
                        $0.pending == 0 && $0.failed == 0 && $0.dead == 0
                    }
                    for caller in 1...20 {
                        let server = try await backend.get("/api/v1/orders/ord_\(caller)")
                        #expect(server.text.contains("burst \(burst)"), "ord_\(caller): \(server.text.prefix(300))")
                    }
                }
            }
        }
    }
}
