public import RepairSyncModels

/// Time as the engine reads it: the wall clock (edit times, retry times), a monotonic clock (waits the server asks
/// for, durations) and sleeping. Tests use a skewed or jumping wall clock; the simulator a virtual one for all three.
public protocol EngineClock: Sendable {
    /// The wall clock.
    func now() -> Timestamp
    /// Monotonic time since an arbitrary origin: never goes back when the wall clock is set.
    func uptime() -> Duration
    /// Suspends for `duration` on the monotonic clock.
    func sleep(for duration: Duration) async throws
}

/// The origin of the default monotonic clock.
private let processStart = ContinuousClock.now

extension EngineClock {
    public func uptime() -> Duration { ContinuousClock.now - processStart }

    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

/// The system clock, optionally skewed (to test a workstation whose clock is wrong).
public struct SystemEngineClock: EngineClock {
    public var skewMilliseconds: Int64

    public init(skewMilliseconds: Int64 = 0) { self.skewMilliseconds = skewMilliseconds }

    public func now() -> Timestamp { Timestamp.now().adding(milliseconds: skewMilliseconds) }
}
