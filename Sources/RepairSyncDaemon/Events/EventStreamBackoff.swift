/// How long the stream client waits before its next connection attempt: exponential from `base` to `cap` with
/// equal jitter (between half and all of the step, drawn afresh each time), so a shop's workstations that lost the
/// stream together come back spread out, and a server that keeps refusing sees one attempt per `cap` at most.
///
/// ```text
/// failures:  1        2        3        4 …      n
/// wait:      base·[½,1]  2·base·[½,1]  4·base·[½,1] …  min(cap, base·2^(n−1))·[½,1]
/// ```
///
/// A stream that stayed up for `healthyAfter` resets the count: the next drop waits one short step only. A stream
/// that is accepted and dropped at once is a failure like a refusal — no storm against a server that accepts and
/// closes.
public struct EventStreamBackoff: Sendable, Equatable {
    public var base: Duration
    public var cap: Duration
    public var healthyAfter: Duration

    public init(base: Duration = .seconds(1), cap: Duration = .seconds(60), healthyAfter: Duration = .seconds(30)) {
        self.base = base
        self.cap = max(cap, base)
        self.healthyAfter = healthyAfter
    }

    /// The wait after `failures` consecutive failures (at least 1), `random` in 0…1 drawing the jitter.
    public func delay(failures: Int, random: Double) -> Duration {
        let exponent = min(max(failures, 1) - 1, 30)
        let step = min(cap, base * (1 << exponent))
        return step * (0.5 + 0.5 * min(max(random, 0), 1))
    }
}
