import BackendTestSupport
import Foundation
import RepairSyncEngine
import RepairSyncModels
import Testing

/// The wall clock jumping under the engine: a retry time is wall-clock time in the outbox, so a clock set back must
/// not leave a change waiting for hours. ("At once" is asserted by the run that sends it, not by time: the limit only
/// stops a hang. It is 3 minutes, as for the other suites with a backend, because the test starts while the whole
/// parallel suite does: it took 67 s there on a clean clone, 1.2 s alone.)
@Suite("Clock jumps", .timeLimit(.minutes(3)))
struct ClockJumpTests {
    @Test("a change rate-limited while the clock was 2 hours ahead is sent at once after the clock is set back")
    func retryAfterClockSetBack() async throws {
        let ahead = SystemEngineClock(skewMilliseconds: 2 * 3600 * 1000)
        let configuration = EngineConfiguration(
            pageSize: 40, retry: RetryPolicy(base: .seconds(1), cap: .seconds(5), maxAttempts: 10),
            completedHold: .milliseconds(50))
        try await EngineHarness.with(configuration: configuration, clock: ahead) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_5", fields: ["notes": "written before the clock went back"])
            // A 429 stops the run and stores the retry time (now + Retry-After, on the clock 2 hours ahead); unlike a
            // 5xx, whose jittered retry may come due again within the same run, it stays in the outbox.
            try await h.fault("429", method: "PATCH", path: "/api/v1/orders/ord_5")
            let failed = await h.engine.sync([.orders])
            #expect(failed.retryAfterMilliseconds != nil, "\(failed)")
            let entry = try #require(try h.engine.outboxEntries().first)
            #expect(entry.state == .failed)
            let storedAhead =
                try #require(entry.nextAttemptAt).millisecondsSince1970 - Timestamp.now().millisecondsSince1970
            #expect(storedAhead > 3600 * 1000, "the retry time was written on the clock 2 hours ahead")

            // The clock is corrected (an engine on the same store with the right time): the change is due now, not
            // in two hours, and the run says so to the scheduler.
            let corrected = try h.reopenedEngine(configuration: configuration)
            let report = await corrected.sync([.orders])
            #expect(report.pushed == 1, "\(report)")
            #expect(
                try await h.serverRecord(Order.self, "orders", "ord_5").notes == "written before the clock went back")
        }
    }

    @Test("a retry time never lies further ahead than the retry cap, even when the server asks for a longer wait")
    func retryTimeCappedAtHorizon() {
        let policy = RetryPolicy(base: .seconds(1), cap: .seconds(30), maxAttempts: 10)
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(3600), random: 1) == .seconds(30))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(10), random: 0) == .seconds(10))
        #expect(policy.horizon > policy.cap)
    }
}
