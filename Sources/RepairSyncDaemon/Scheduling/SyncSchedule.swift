public import RepairSyncModels

/// When to sync, as a state machine with no clock of its own: every input carries the time, `nextRun()` says what
/// to run and when, and the driver (`SchedulerService`) sleeps until then. Generic over the instant type so tests
/// drive it with a fake time.
///
/// ```text
///             start-up ──▶ [run due now]
///   run ends ok ──▶ next periodic = end + interval ± jitter        (resets after every full run)
///   run fails  ──▶ retry = end + min(interval, base·2^(n−1)) with jitter   (n = 1 when it committed something)
///   429        ──▶ retry = end + the server's Retry-After (not a failure), at least 1 s; the n-th in a row (n ≥ 2)
///                    with nothing committed at least retryBase·2^(n−2) with jitter, capped at the interval
///   a change waits for its retry ──▶ push-only run when it is due
///   run offline ─▶ offline: nothing planned but what the probe brings
///   probe: online again ──▶ reconnect run now (push, then pull all)
///   local change ──▶ push-only run after the debounce (at most pushMaxDelay after the first)
///   server change (event stream) ──▶ pull of the named collections after a short debounce (at most
///                    serverChangeMaxDelay after the first); a burst is one run, a run in progress one follow-up
///   paused ──▶ only manual runs
/// ```
public struct SyncSchedule<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    public enum Reason: String, Sendable {
        case startup, periodic, retry, reconnect, manual
        case localChange = "local-change"
        /// A change that failed is due for its next attempt.
        case changeRetry = "change-retry"
        /// The server's event stream announced changes.
        case serverChange = "server-change"
    }

    public enum Outcome: Sendable, Equatable {
        case succeeded
        case failed
        /// Failed, but committed something first: the server works, if badly — retry soon, without growing backoff.
        case failedAfterProgress
        /// The server said 429 (or 503 with `Retry-After`): come back after its Retry-After. `progressed`: the run
        /// committed something first (the server works, if slowly — its rate limits do not grow the backoff).
        case rateLimited(Duration, progressed: Bool = false)
        case offline
    }

    public struct Run: Sendable, Equatable {
        public var at: Instant
        public var reason: Reason
        /// Collections to pull after the push (empty: push only).
        public var collections: Set<SyncCollection>
        /// Also refresh the dashboard (full runs).
        public var full: Bool
    }

    public private(set) var policy: SchedulePolicy
    public private(set) var paused = false
    public private(set) var online = true
    public private(set) var consecutiveFailures = 0
    /// Runs stopped by a rate limit (429, or 503 with `Retry-After`) since the last run that succeeded.
    public private(set) var consecutiveRateLimits = 0

    private var periodic: (at: Instant, reason: Reason)?
    private var manual: (at: Instant, collections: Set<SyncCollection>?)?
    private var push: (at: Instant, first: Instant)?
    private var changeRetry: Instant?
    /// Until when the last rate limit asked to wait (the server's own Retry-After): nothing brings a run before it, a
    /// reload included. Kept after it passed (harmless then): a run that ends otherwise may not have asked the server.
    private var serverWaitUntil: Instant?
    private var serverChange: (at: Instant, first: Instant, collections: Set<SyncCollection>)?
    private var lastPulled: [SyncCollection: Instant] = [:]

    public init(policy: SchedulePolicy, now: Instant) {
        self.policy = policy
        periodic = (now, .startup)
    }

    // MARK: What to run

    /// The next run, or nil when there is nothing to do until an event (offline, or paused with nothing asked).
    /// While offline nothing is planned — not even a manual run, which waits for the reconnect run.
    public func nextRun() -> Run? {
        guard online else { return nil }
        var candidates: [Run] = []
        if let manual {
            candidates.append(
                Run(
                    at: manual.at, reason: .manual, collections: manual.collections ?? Set(SyncCollection.allCases),
                    full: manual.collections == nil))
        }
        if !paused {
            if let periodic {
                let collections =
                    periodic.reason == .periodic ? due(at: periodic.at) : Set(SyncCollection.allCases)
                candidates.append(Run(at: periodic.at, reason: periodic.reason, collections: collections, full: true))
            }
            if let push {
                candidates.append(Run(at: push.at, reason: .localChange, collections: [], full: false))
            }
            if let changeRetry {
                candidates.append(Run(at: changeRetry, reason: .changeRetry, collections: [], full: false))
            }
            if let serverChange {
                candidates.append(
                    Run(at: serverChange.at, reason: .serverChange, collections: serverChange.collections, full: false))
            }
        }
        return candidates.min { $0.at < $1.at }
    }

    /// Collections whose last pull is older than their maximum age at `time` (never pulled: due).
    func due(at time: Instant) -> Set<SyncCollection> {
        Set(
            SyncCollection.allCases.filter { collection in
                guard let last = lastPulled[collection] else { return true }
                return last.advanced(by: policy.maxAge[collection] ?? .zero) <= time
            })
    }

    // MARK: Events

    /// `repairctl sync`: run now (`collections` nil: everything).
    public mutating func manualRequested(_ collections: Set<SyncCollection>?, now: Instant) {
        if let existing = manual {
            let merged: Set<SyncCollection>? =
                existing.collections.flatMap { old in collections.map { old.union($0) } }
            manual = (existing.at, merged)
        } else {
            manual = (now, collections)
        }
    }

    /// A change was queued locally: push soon, debounced.
    public mutating func localChange(now: Instant) {
        let first = push?.first ?? now
        let deadline = first.advanced(by: policy.pushMaxDelay)
        let debounced = now.advanced(by: policy.pushDebounce)
        push = (min(debounced, deadline), first)
    }

    /// The server announced changes to `collections`: pull them soon, debounced (a burst of announcements is one
    /// run; announcements during a run make one run after it).
    public mutating func serverChanged(_ collections: Set<SyncCollection>, now: Instant) {
        guard !collections.isEmpty else { return }
        let first = serverChange?.first ?? now
        let deadline = first.advanced(by: policy.serverChangeMaxDelay)
        let debounced = now.advanced(by: policy.serverChangeDebounce)
        serverChange = (min(debounced, deadline), first, collections.union(serverChange?.collections ?? []))
    }

    public mutating func setPaused(_ paused: Bool) { self.paused = paused }

    /// The probe's verdict. Offline → online plans a reconnect run at once.
    public mutating func connectivityChanged(online: Bool, now: Instant) {
        guard online != self.online else { return }
        self.online = online
        if online {
            // The reconnect run pushes everything and pulls everything: it answers what waited while offline.
            periodic = (now, .reconnect)
            manual = nil
            push = nil
            serverChange = nil
        }
    }

    /// A run is starting: what it covers is no longer pending.
    public mutating func runStarted(_ run: Run) {
        // Every run pushes what is due; its end plans the next change retry again.
        changeRetry = nil
        switch run.reason {
        case .manual: manual = nil
        case .localChange, .changeRetry: push = nil
        case .serverChange: serverChange = nil
        case .startup, .periodic, .retry, .reconnect:
            periodic = nil
            push = nil
        }
        // A full run pushes everything and pulls everything: it also answers what was asked meanwhile.
        if run.full {
            push = nil
            manual = nil
        }
        // Any run pulling what the server announced answers the announcement.
        if let pending = serverChange, pending.collections.isSubset(of: run.collections) { serverChange = nil }
    }

    /// A run ended at `now`. `random` in 0…1 draws the jitter. `nextChangeDue`: how long until the earliest change
    /// waiting for a retry is due (nil: none).
    public mutating func runFinished(
        _ run: Run, outcome: Outcome, now: Instant, random: Double, nextChangeDue: Duration? = nil
    ) {
        if let nextChangeDue, outcome != .offline {
            // Not sooner than the debounce: a change failing at once must not spin.
            changeRetry = now.advanced(by: max(nextChangeDue, policy.pushDebounce))
        }
        if case .rateLimited(let wait, _) = outcome { serverWaitUntil = now.advanced(by: wait) }
        switch outcome {
        case .succeeded:
            consecutiveFailures = 0
            consecutiveRateLimits = 0
            for collection in run.collections { lastPulled[collection] = now }
            if run.full || ![.localChange, .changeRetry, .serverChange].contains(run.reason) {
                periodic = (now.advanced(by: jittered(policy.interval, random)), .periodic)
            } else if periodic == nil {
                periodic = (now.advanced(by: jittered(policy.interval, random)), .periodic)
            }
        case .rateLimited(let wait, let progressed):
            // When the server said, plus a little jitter so a shop's clients do not all come back at once. Its
            // Retry-After is the earliest, not the plan: a server that answers 0 (or a date already past), or 1 s
            // again and again through an outage, must not get a request a second — at least 1 s, and from the second
            // rate limit in a row on, at least the failures' backoff one step behind (retryBase·2^(n−2), capped at the
            // interval, between half and all of it).
            consecutiveRateLimits = progressed ? 1 : consecutiveRateLimits + 1
            var floor = Duration.seconds(1)
            if consecutiveRateLimits > 1 {
                let exponent = min(consecutiveRateLimits - 2, 30)
                floor = min(policy.interval, policy.retryBase * (1 << exponent)) * (0.5 + 0.5 * min(max(random, 0), 1))
            }
            let retry = now.advanced(by: max(wait + wait * (0.1 * min(max(random, 0), 1)), floor))
            periodic = (retry, .retry)
            // Nothing may be sent before then; a change retry would only meet the client's own gate.
            if let due = changeRetry, due < retry { changeRetry = retry }
        case .failedAfterProgress:
            consecutiveFailures = 1
            periodic = (now.advanced(by: policy.retryBase * (0.5 + 0.5 * min(max(random, 0), 1))), .retry)
            waitForRetry()
        case .failed:
            consecutiveFailures += 1
            let exponent = min(consecutiveFailures - 1, 30)
            let backoff = min(policy.interval, policy.retryBase * (1 << exponent))
            // Equal jitter: between half and all of the backoff, so retries spread out but never come at once.
            periodic = (now.advanced(by: backoff * (0.5 + 0.5 * min(max(random, 0), 1))), .retry)
            // A run that failed as a whole (a refused token, a store that cannot be read) failed before the changes
            // it listed were tried: they are due as they were, and a change retry a debounce later would fail the
            // same way, every second, for as long as it lasts. They go with the backed-off retry.
            waitForRetry()
        case .offline:
            online = false
            // Back online, the probe plans the reconnect run; until then nothing is attempted.
            periodic = (now.advanced(by: jittered(policy.interval, random)), .periodic)
        }
    }

    /// No change retry before the planned retry run (which pushes what is due).
    private mutating func waitForRetry() {
        if let due = changeRetry, let retry = periodic?.at, due < retry { changeRetry = retry }
    }

    /// A reload's policy. What is planned stays planned — a change waiting for its push or its retry, a manual run, a
    /// pull the server asked for, a backed-off retry, the start-up run, the failures counted so far; the next
    /// periodic run comes no later than one new interval from now (before, a reload planned a fresh schedule's
    /// periodic run an interval away, and a change queued just before it waited for that). So does a backed-off
    /// retry, whose backoff the interval caps — but never before a Retry-After the server gave.
    public mutating func reconfigure(_ policy: SchedulePolicy, now: Instant) {
        self.policy = policy
        if let planned = periodic, planned.reason == .periodic || planned.reason == .retry {
            var latest = now.advanced(by: policy.interval)
            if planned.reason == .retry, let until = serverWaitUntil, until > latest { latest = until }
            if latest < planned.at { periodic = (latest, planned.reason) }
        }
    }

    func jittered(_ duration: Duration, _ random: Double) -> Duration {
        duration * (1 + policy.jitter * (2 * min(max(random, 0), 1) - 1))
    }
}
