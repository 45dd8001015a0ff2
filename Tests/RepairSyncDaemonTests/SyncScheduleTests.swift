import RepairSyncDaemon
import RepairSyncModels
import Testing

/// A fake instant: a duration since an arbitrary origin. The schedule never reads a clock.
struct FakeInstant: InstantProtocol, Sendable {
    var offset: Duration
    static let zero = FakeInstant(offset: .zero)
    func advanced(by duration: Duration) -> FakeInstant { FakeInstant(offset: offset + duration) }
    func duration(to other: FakeInstant) -> Duration { other.offset - offset }
    static func < (lhs: FakeInstant, rhs: FakeInstant) -> Bool { lhs.offset < rhs.offset }
    static func seconds(_ value: Double) -> FakeInstant { FakeInstant(offset: .milliseconds(Int64(value * 1000))) }
}

/// The scheduler's decisions, on a fake time: no test here waits for anything.
@Suite("Sync schedule")
struct SyncScheduleTests {
    typealias Schedule = SyncSchedule<FakeInstant>
    let policy = SchedulePolicy(
        interval: .seconds(900), jitter: 0.1, maxAge: [.clients: .seconds(3600)], retryBase: .seconds(5),
        pushDebounce: .seconds(1), pushMaxDelay: .seconds(5))

    /// Runs what is planned at its time and finishes it with `outcome`.
    func runNext(
        _ schedule: inout Schedule, outcome: Schedule.Outcome = .succeeded, duration: Double = 2, random: Double = 0.5
    )
        -> Schedule.Run?
    {
        guard let run = schedule.nextRun() else { return nil }
        schedule.runStarted(run)
        schedule.runFinished(
            run, outcome: outcome, now: run.at.advanced(by: .milliseconds(Int64(duration * 1000))), random: random)
        return run
    }

    @Test("start-up runs at once and pulls everything; then every interval ±10 %, measured from the run's end")
    func startupAndInterval() {
        var schedule = Schedule(policy: policy, now: .zero)
        let first = runNext(&schedule, duration: 3)
        #expect(first?.reason == .startup)
        #expect(first?.at == .zero)
        #expect(first?.collections == Set(SyncCollection.allCases))
        for random in [0.0, 0.25, 0.5, 1.0] {
            var copy = schedule
            copy.runFinished(first!, outcome: .succeeded, now: .seconds(3), random: random)
            let next = copy.nextRun()!
            #expect(next.reason == .periodic)
            let delay = next.at.offset - FakeInstant.seconds(3).offset
            // ±10 % of 900 s (a millisecond of slack for floating point).
            #expect(delay >= .milliseconds(809_999) && delay <= .milliseconds(990_001), "\(delay) for random \(random)")
        }
        #expect(schedule.nextRun()?.at == .seconds(903))
    }

    @Test("a periodic run pulls only the collections that are due: clients hourly, the rest every run")
    func perCollectionAge() {
        var schedule = Schedule(policy: policy, now: .zero)
        _ = runNext(&schedule, duration: 0)  // start-up at 0, pulls all
        let second = runNext(&schedule, duration: 0)  // periodic at 900 s
        #expect(second?.reason == .periodic)
        #expect(second?.collections == Set(SyncCollection.allCases).subtracting([.clients]))
        _ = runNext(&schedule, duration: 0)  // 1800 s
        _ = runNext(&schedule, duration: 0)  // 2700 s
        let fifth = runNext(&schedule, duration: 0)  // 3600 s: clients are an hour old
        #expect(fifth?.at == .seconds(3600))
        #expect(fifth?.collections.contains(.clients) == true)
    }

    @Test("a manual run happens at once and resets the periodic timer")
    func manualResetsTimer() {
        var schedule = Schedule(policy: policy, now: .zero)
        _ = runNext(&schedule, duration: 0)
        schedule.manualRequested(nil, now: .seconds(600))
        let manual = runNext(&schedule, duration: 1)
        #expect(manual?.reason == .manual)
        #expect(manual?.at == .seconds(600))
        #expect(schedule.nextRun()?.at == .seconds(1501), "900 s after the manual run ended, not after start-up")
    }

    @Test("failures back off exponentially with jitter up to the interval; success goes back to the interval")
    func backoff() {
        var schedule = Schedule(policy: policy, now: .zero)
        var ends: [FakeInstant] = []
        var delays: [Duration] = []
        var run = schedule.nextRun()!
        for _ in 0..<10 {
            schedule.runStarted(run)
            let end = run.at.advanced(by: .seconds(1))
            schedule.runFinished(run, outcome: .failed, now: end, random: 1)
            ends.append(end)
            run = schedule.nextRun()!
            #expect(run.reason == .retry)
            delays.append(end.duration(to: run.at))
        }
        #expect(delays.prefix(5) == [.seconds(5), .seconds(10), .seconds(20), .seconds(40), .seconds(80)])
        #expect(delays.allSatisfy { $0 <= .seconds(900) })
        #expect(delays.last == .seconds(900), "capped at the interval")
        var low = schedule
        low.runStarted(run)
        low.runFinished(run, outcome: .failed, now: run.at, random: 0)
        #expect(run.at.duration(to: low.nextRun()!.at) == .seconds(450), "jitter keeps at least half the backoff")
        schedule.runStarted(run)
        schedule.runFinished(run, outcome: .succeeded, now: run.at, random: 0.5)
        #expect(schedule.consecutiveFailures == 0)
        #expect(run.at.duration(to: schedule.nextRun()!.at) == .seconds(900))
    }

    @Test("a burst of local changes is pushed once, a debounce after the last, at most 5 s after the first")
    func debounce() {
        var schedule = Schedule(policy: policy, now: .zero)
        _ = runNext(&schedule, duration: 0)
        for t in stride(from: 100.0, through: 100.6, by: 0.2) { schedule.localChange(now: .seconds(t)) }
        let push = schedule.nextRun()
        #expect(push?.reason == .localChange)
        #expect(push?.at == .seconds(101.6))
        #expect(push?.collections == [])
        // A change every half second for ten seconds: the push is not postponed beyond 5 s after the first.
        var busy = Schedule(policy: policy, now: .zero)
        _ = runNext(&busy, duration: 0)
        for t in stride(from: 200.0, through: 210.0, by: 0.5) { busy.localChange(now: .seconds(t)) }
        #expect(busy.nextRun()?.at == .seconds(205))
        _ = runNext(&busy, duration: 0)
        #expect(busy.nextRun()?.reason == .periodic, "the push-only run does not reset the periodic timer")
        #expect(busy.nextRun()?.at == .seconds(900))
    }

    @Test("paused: no periodic or push runs, manual runs still happen; resume brings them back")
    func pause() {
        var schedule = Schedule(policy: policy, now: .zero)
        _ = runNext(&schedule, duration: 0)
        schedule.setPaused(true)
        schedule.localChange(now: .seconds(10))
        #expect(schedule.nextRun() == nil)
        schedule.manualRequested([.orders], now: .seconds(20))
        let manual = runNext(&schedule, duration: 0)
        #expect(manual?.reason == .manual)
        #expect(manual?.collections == [.orders])
        #expect(schedule.nextRun() == nil)
        schedule.setPaused(false)
        #expect(schedule.nextRun()?.reason == .localChange)
    }

    @Test("offline: nothing is attempted, not even a manual run; back online, a reconnect run at once pulls all")
    func offline() {
        var schedule = Schedule(policy: policy, now: .zero)
        let first = schedule.nextRun()!
        schedule.runStarted(first)
        schedule.runFinished(first, outcome: .offline, now: .seconds(1), random: 0.5)
        #expect(!schedule.online)
        schedule.localChange(now: .seconds(2))
        schedule.manualRequested(nil, now: .seconds(3))
        #expect(schedule.nextRun() == nil)
        schedule.connectivityChanged(online: true, now: .seconds(40))
        guard let reconnect = schedule.nextRun() else {
            Issue.record("nothing planned after reconnecting")
            return
        }
        #expect(reconnect.reason == .reconnect)
        #expect(reconnect.at == .seconds(40))
        #expect(reconnect.collections == Set(SyncCollection.allCases))
        schedule.runStarted(reconnect)
        schedule.runFinished(reconnect, outcome: .succeeded, now: .seconds(41), random: 0.5)
        #expect(schedule.nextRun()?.reason == .periodic, "the reconnect run answered the manual request and the push")
        #expect(schedule.nextRun()?.at == .seconds(941))
    }

    @Test(
        "a run that fails as a whole with changes due (a refused token): the changes wait for the backed-off retry, not a debounce, so the runs do not come every second"
    )
    func failedRunWithChangesDue() {
        var schedule = Schedule(policy: policy, now: .zero)
        var run = schedule.nextRun()!
        var gaps: [Duration] = []
        for _ in 0..<6 {
            schedule.runStarted(run)
            let end = run.at.advanced(by: .seconds(1))
            schedule.runFinished(run, outcome: .failed, now: end, random: 1, nextChangeDue: .zero)
            run = schedule.nextRun()!
            gaps.append(end.duration(to: run.at))
        }
        #expect(
            gaps == [.seconds(5), .seconds(10), .seconds(20), .seconds(40), .seconds(80), .seconds(160)], "\(gaps)")
        // After a run that made progress, the same: the base backoff, not the debounce.
        schedule.runStarted(run)
        schedule.runFinished(run, outcome: .failedAfterProgress, now: run.at, random: 1, nextChangeDue: .zero)
        #expect(run.at.duration(to: schedule.nextRun()!.at) == .seconds(5))
    }

    @Test("429: the retry comes when the server said, the backoff does not grow, and change retries wait for it too")
    func rateLimitedRetry() {
        var schedule = Schedule(policy: policy, now: .zero)
        _ = runNext(&schedule, outcome: .failed, duration: 0)  // one real failure: backoff at 1
        #expect(schedule.consecutiveFailures == 1)
        let run = schedule.nextRun()!
        schedule.runStarted(run)
        let end = run.at.advanced(by: .seconds(1))
        schedule.runFinished(run, outcome: .rateLimited(.seconds(30)), now: end, random: 0, nextChangeDue: .zero)
        #expect(schedule.consecutiveFailures == 1, "a rate limit is not a failure")
        let next = schedule.nextRun()!
        #expect(next.at == end.advanced(by: .seconds(30)), "not before the Retry-After, and not the growing backoff")
        #expect(next.reason == .retry)
    }

    @Test(
        "a Retry-After of 0 (or a date already past) or 1 s again and again is not a tight loop: at least 1 s, then a growing backoff, back to the server's word after a success"
    )
    func rateLimitedWithoutAWait() {
        var schedule = Schedule(policy: policy, now: .zero)
        var waits: [Duration] = []
        for _ in 1...12 {
            let run = schedule.nextRun()!
            schedule.runStarted(run)
            let end = run.at.advanced(by: .milliseconds(50))
            schedule.runFinished(run, outcome: .rateLimited(.zero), now: end, random: 1, nextChangeDue: .zero)
            waits.append(end.duration(to: schedule.nextRun()!.at))
        }
        #expect(waits[0] == .seconds(1), "the first: the server's word, but not sooner than 1 s")
        #expect(waits[1] == policy.retryBase, "the second: the base backoff")
        #expect(zip(waits, waits.dropFirst()).allSatisfy { $0 <= $1 }, "\(waits)")
        #expect(waits.last == policy.interval, "capped at the interval: \(waits)")
        #expect(schedule.consecutiveRateLimits == 12 && schedule.consecutiveFailures == 0)
        // A run that committed something before its rate limit: the server works, slowly — no growth.
        let progressed = schedule.nextRun()!
        schedule.runStarted(progressed)
        schedule.runFinished(progressed, outcome: .rateLimited(.zero, progressed: true), now: progressed.at, random: 1)
        #expect(schedule.nextRun()!.at == progressed.at.advanced(by: .seconds(1)))
        #expect(schedule.consecutiveRateLimits == 1)
        // A longer Retry-After still wins over the backoff.
        let run = schedule.nextRun()!
        schedule.runStarted(run)
        schedule.runFinished(run, outcome: .rateLimited(policy.interval * 2), now: run.at, random: 0)
        #expect(schedule.nextRun()!.at == run.at.advanced(by: policy.interval * 2))
        #expect(schedule.consecutiveRateLimits == 2)
        // Once a run gets through, the next rate limit is taken at the server's word again.
        _ = runNext(&schedule, outcome: .succeeded)
        #expect(schedule.consecutiveRateLimits == 0)
        let after = schedule.nextRun()!
        schedule.runStarted(after)
        schedule.runFinished(after, outcome: .rateLimited(.seconds(3)), now: after.at, random: 0)
        #expect(schedule.nextRun()!.at == after.at.advanced(by: .seconds(3)))
    }

    @Test("a change waiting for its retry gets a push-only run when it is due, not at the next periodic run")
    func changeRetryIsScheduled() {
        var schedule = Schedule(policy: policy, now: .zero)
        let first = schedule.nextRun()!
        schedule.runStarted(first)
        schedule.runFinished(first, outcome: .succeeded, now: .seconds(2), random: 0.5, nextChangeDue: .seconds(4))
        let retry = schedule.nextRun()!
        #expect(retry.reason == .changeRetry)
        #expect(retry.at == .seconds(6))
        #expect(retry.collections.isEmpty && !retry.full)
        // Due at once: not sooner than the debounce, so a change that fails at once cannot spin.
        schedule.runStarted(retry)
        schedule.runFinished(retry, outcome: .succeeded, now: .seconds(7), random: 0.5, nextChangeDue: .zero)
        #expect(schedule.nextRun()?.at == .seconds(8))
        // Nothing waiting: back to the periodic plan.
        let again = schedule.nextRun()!
        schedule.runStarted(again)
        schedule.runFinished(again, outcome: .succeeded, now: .seconds(8), random: 0.5, nextChangeDue: nil)
        #expect(schedule.nextRun()?.reason == .periodic)
    }

    @Test("a run that failed after committing something retries after the base backoff, without growing it")
    func failureAfterProgress() {
        var schedule = Schedule(policy: policy, now: .zero)
        for _ in 0..<5 { _ = runNext(&schedule, outcome: .failed, duration: 0, random: 1) }
        #expect(schedule.consecutiveFailures == 5)
        let run = schedule.nextRun()!
        schedule.runStarted(run)
        schedule.runFinished(run, outcome: .failedAfterProgress, now: run.at, random: 1)
        #expect(schedule.consecutiveFailures == 1)
        #expect(schedule.nextRun()?.at == run.at.advanced(by: policy.retryBase))
    }

    @Test(
        "a reload keeps what is planned — a queued change's push, a backed-off retry, the start-up run — and brings the periodic run and a longer retry no later than the new interval, never before a Retry-After"
    )
    func reloadKeepsThePlan() {
        let shorter = SchedulePolicy(
            interval: .seconds(60), jitter: 0.1, maxAge: [:], retryBase: .seconds(5), pushDebounce: .seconds(1),
            pushMaxDelay: .seconds(5))

        // Before the start-up run: it still comes at once.
        var fresh = Schedule(policy: policy, now: .zero)
        fresh.reconfigure(shorter, now: .seconds(0.5))
        #expect(fresh.nextRun()?.reason == .startup)
        #expect(fresh.nextRun()?.at == .zero)

        // A change queued just before the reload: its push a debounce later, not an interval.
        var schedule = Schedule(policy: policy, now: .zero)
        _ = runNext(&schedule, duration: 0)
        schedule.localChange(now: .seconds(10))
        schedule.reconfigure(shorter, now: .seconds(10.5))
        #expect(schedule.nextRun()?.reason == .localChange)
        #expect(schedule.nextRun()?.at == .seconds(11))
        #expect(schedule.policy.interval == .seconds(60))
        // Then the periodic run: no later than one new interval from the reload.
        _ = runNext(&schedule, duration: 0)
        let periodic = schedule.nextRun()!
        #expect(periodic.reason == .periodic && periodic.at <= .seconds(70.5), "\(periodic)")

        // Failures counted so far still count: the backed-off retry stays where it was.
        var failing = Schedule(policy: policy, now: .zero)
        for _ in 0..<3 { _ = runNext(&failing, outcome: .failed, duration: 0, random: 1) }
        let retry = failing.nextRun()!
        failing.reconfigure(shorter, now: retry.at.advanced(by: .seconds(-1)))
        #expect(failing.nextRun() == retry)
        #expect(failing.consecutiveFailures == 3)

        // A retry backed off to the old interval (15 min) comes no later than the new one (1 min): the interval caps
        // the backoff.
        var longFailing = Schedule(policy: policy, now: .zero)
        for _ in 0..<12 { _ = runNext(&longFailing, outcome: .failed, duration: 0, random: 1) }
        let far = longFailing.nextRun()!
        let reloadedAt = far.at.advanced(by: .zero - policy.interval / 2)
        #expect(far.reason == .retry && reloadedAt.advanced(by: shorter.interval) < far.at, "\(far)")
        longFailing.reconfigure(shorter, now: reloadedAt)
        #expect(longFailing.nextRun()?.reason == .retry)
        #expect(longFailing.nextRun()?.at == reloadedAt.advanced(by: shorter.interval))
        #expect(longFailing.consecutiveFailures == 12)

        // The server's Retry-After stands: a reload never brings a run before it.
        var limited = Schedule(policy: policy, now: .zero)
        _ = runNext(&limited, duration: 0)
        limited.manualRequested(nil, now: .seconds(10))
        _ = runNext(&limited, outcome: .rateLimited(.seconds(600)), duration: 0, random: 0)
        let waiting = limited.nextRun()!
        #expect(waiting.reason == .retry && waiting.at == .seconds(610), "\(waiting)")
        limited.reconfigure(shorter, now: .seconds(20))
        #expect(limited.nextRun() == waiting)
    }
}
