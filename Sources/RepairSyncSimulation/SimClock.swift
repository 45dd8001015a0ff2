public import RepairSyncEngine
public import RepairSyncModels
internal import Synchronization

/// Virtual time for one simulation: the wall clock and the monotonic clock move only when the simulator advances
/// them, so retry times, Retry-After waits and last-write-wins decisions replay exactly for a seed.
public final class SimClock: EngineClock {
    private struct State {
        var wall: Int64
        /// The latest the wall clock has shown (a retry time written then may lie up to the retry cap beyond it).
        var latestWall: Int64
        var uptime: Duration = .seconds(1000)
        var sleepers: [(until: Duration, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Mutex<State>

    public init(start: Timestamp) {
        state = Mutex(State(wall: start.millisecondsSince1970, latestWall: start.millisecondsSince1970))
    }

    /// How far the wall clock is behind the latest time it has shown (after it was set back), in milliseconds.
    public var wallSetBack: Int64 { state.withLock { $0.latestWall - $0.wall } }

    public func now() -> Timestamp { Timestamp(millisecondsSince1970: state.withLock { $0.wall }) }

    public func uptime() -> Duration { state.withLock { $0.uptime } }

    /// Waits until the simulator has advanced the clock by `duration` (at once when it is not positive).
    public func sleep(for duration: Duration) async throws {
        guard duration > .zero else { return }
        await withCheckedContinuation { continuation in
            state.withLock { $0.sleepers.append(($0.uptime + duration, continuation)) }
        }
    }

    /// Sleepers waiting for the clock to move.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// Moves both clocks forward and wakes the sleepers whose time has come.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state in
            state.wall += duration.milliseconds
            state.latestWall = max(state.latestWall, state.wall)
            state.uptime += duration
            let due = state.sleepers.filter { $0.until <= state.uptime }
            state.sleepers.removeAll { $0.until <= state.uptime }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Moves the wall clock alone (an admin or NTP setting the time).
    public func jumpWall(by milliseconds: Int64) {
        state.withLock {
            $0.wall += milliseconds
            $0.latestWall = max($0.latestWall, $0.wall)
        }
    }
}
