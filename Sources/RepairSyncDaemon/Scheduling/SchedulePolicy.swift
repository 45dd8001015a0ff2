public import RepairSyncModels

/// What the scheduler is told by the configuration.
public struct SchedulePolicy: Sendable, Equatable {
    /// Between periodic runs, measured from the end of the last full run; ±`jitter` of it at random.
    public var interval: Duration
    public var jitter: Double
    /// How old a collection's last pull may be before a periodic run pulls it again (absent: every run).
    public var maxAge: [SyncCollection: Duration]
    /// After a failed run: `retryBase`·2^(n−1), capped at the interval, with jitter.
    public var retryBase: Duration
    /// A local change is pushed this long after the last change of a burst…
    public var pushDebounce: Duration
    /// …but never later than this after the first one.
    public var pushMaxDelay: Duration
    /// A change announced on the server's event stream is pulled this long after the last of a burst…
    public var serverChangeDebounce: Duration
    /// …but never later than this after the first one.
    public var serverChangeMaxDelay: Duration
    /// Once the daemon has been quiet this long after a run, it hands back the memory the run and start-up left
    /// (`IdleMemory`; nil: never). Not a configuration key: tests shorten it.
    public var releaseMemoryAfter: Duration?

    public init(
        interval: Duration = .seconds(900), jitter: Double = 0.1,
        maxAge: [SyncCollection: Duration] = [.clients: .seconds(3600)], retryBase: Duration = .seconds(5),
        pushDebounce: Duration = .seconds(1), pushMaxDelay: Duration = .seconds(5),
        serverChangeDebounce: Duration = .milliseconds(100), serverChangeMaxDelay: Duration = .milliseconds(500),
        releaseMemoryAfter: Duration? = .seconds(30)
    ) {
        self.releaseMemoryAfter = releaseMemoryAfter
        self.serverChangeDebounce = serverChangeDebounce
        self.serverChangeMaxDelay = serverChangeMaxDelay
        self.interval = interval
        self.jitter = jitter
        self.maxAge = maxAge
        self.retryBase = retryBase
        self.pushDebounce = pushDebounce
        self.pushMaxDelay = pushMaxDelay
    }
}
