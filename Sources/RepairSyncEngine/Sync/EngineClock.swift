public import RepairSyncModels

/// The wall clock the engine reads (edit times, retry times). Tests use a skewed or fixed one.
public protocol EngineClock: Sendable {
    func now() -> Timestamp
}

/// The system clock, optionally skewed (to test a workstation whose clock is wrong).
public struct SystemEngineClock: EngineClock {
    public var skewMilliseconds: Int64

    public init(skewMilliseconds: Int64 = 0) { self.skewMilliseconds = skewMilliseconds }

    public func now() -> Timestamp { Timestamp.now().adding(milliseconds: skewMilliseconds) }
}
