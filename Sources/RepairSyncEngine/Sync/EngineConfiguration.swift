public import RepairSyncModels

/// What the engine needs besides the store: retry limits, page size, conflict policies.
public struct EngineConfiguration: Sendable {
    /// Records per changes page (1…1000).
    public var pageSize: Int
    /// Per collection; `ConflictPolicy.defaultPolicy(for:)` where absent.
    public var policies: [SyncCollection: ConflictPolicy]
    public var retry: RetryPolicy
    /// How long `completed` is shown before the status returns to `idle`.
    public var completedHold: Duration
    /// How often one run re-sends a change after 412 replies before leaving it for the next run.
    public var maxRebasesPerRun: Int
    /// Dashboard periods refreshed on each full sync.
    public var dashboardPeriods: [String]
    /// Seals device passcodes in the replica; nil: passcodes are not stored.
    public var passcodeCipher: PasscodeCipher?
    /// Changes of different records in flight at once (entries of one record or one ticket never overlap).
    public var pushConcurrency: Int
    /// Request page n+1 of a feed while page n is applied (the simulator turns it off to run the engine as one
    /// sequence of steps).
    public var pullAhead: Bool
    /// Pages in a row with `has_more: true` that bring no entry or a cursor already seen, after which a collection's
    /// pull stops with an error (a feed that does not advance).
    public var maxStalledPages: Int
    /// Pages of one collection in one run, at most: every loop that talks to the network is bounded.
    public var maxPagesPerRun: Int
    /// Records of one page whose copy is older than the replica's that are checked with `GET /{collection}/{id}`
    /// (a stale copy is ignored, a server whose history went back is followed).
    public var maxVerificationsPerPage: Int
    /// Records a resync did not return that are checked with `GET /{collection}/{id}` (and deleted on a 404) per run.
    public var maxSweepChecks: Int
    /// A number in 0…1 for retry jitter (seeded in the simulator).
    public var random: @Sendable () -> Double
    /// The class each kind of change is pushed in (`PushPriority`); a subject not listed is normal.
    public var pushPriorities: [PushPriorityRule]

    public init(
        pageSize: Int = 500, policies: [SyncCollection: ConflictPolicy] = [:], retry: RetryPolicy = RetryPolicy(),
        completedHold: Duration = .seconds(2), maxRebasesPerRun: Int = 3,
        dashboardPeriods: [String] = ["today", "week", "month"], passcodeCipher: PasscodeCipher? = nil,
        pushConcurrency: Int = 8, pullAhead: Bool = true, maxStalledPages: Int = 3, maxPagesPerRun: Int = 100_000,
        maxVerificationsPerPage: Int = 64, maxSweepChecks: Int = 500,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        pushPriorities: [PushPriorityRule] = PushPriorityRule.defaults
    ) {
        self.pushPriorities = pushPriorities
        self.pushConcurrency = pushConcurrency
        self.pullAhead = pullAhead
        self.maxStalledPages = maxStalledPages
        self.maxPagesPerRun = maxPagesPerRun
        self.maxVerificationsPerPage = maxVerificationsPerPage
        self.maxSweepChecks = maxSweepChecks
        self.random = random
        self.passcodeCipher = passcodeCipher
        self.pageSize = pageSize
        self.policies = policies
        self.retry = retry
        self.completedHold = completedHold
        self.maxRebasesPerRun = maxRebasesPerRun
        self.dashboardPeriods = dashboardPeriods
    }

    public func policy(for collection: SyncCollection) -> ConflictPolicy {
        policies[collection] ?? ConflictPolicy.defaultPolicy(for: collection)
    }
}

/// Exponential backoff with full jitter for transient push failures, honouring Retry-After.
public struct RetryPolicy: Sendable, Hashable {
    public var base: Duration
    public var cap: Duration
    /// Attempts after which an entry becomes dead.
    public var maxAttempts: Int

    public init(base: Duration = .seconds(1), cap: Duration = .seconds(300), maxAttempts: Int = 10) {
        self.base = base
        self.cap = cap
        self.maxAttempts = maxAttempts
    }

    /// The wait before attempt `attempt + 1` (attempt ≥ 1): uniform in 0…min(cap, base·2^(attempt−1)), and never
    /// less than what the server asked for — up to the cap: a longer Retry-After is kept by the client's own gate,
    /// so a stored retry time is never more than the cap ahead (see `horizon`).
    public func delay(afterAttempt attempt: Int, retryAfter: Duration?, random: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let ceiling = min(cap.inMilliseconds, base.inMilliseconds << exponent)
        let jittered = Duration.milliseconds(Int64(Double(ceiling) * min(max(random, 0), 1)))
        guard let retryAfter else { return jittered }
        return min(max(jittered, retryAfter), cap)
    }

    /// How far ahead a stored retry time can lie. One further ahead was written before the wall clock was set back,
    /// and is due now rather than after the clock catches up (which could be hours).
    public var horizon: Duration { cap + .seconds(1) }
}
