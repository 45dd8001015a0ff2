/// How many audit lines each caller of the control socket gets: the first `lines` mutating calls a caller (uid and
/// pid) makes in a window of `window` are logged one line each; the rest of that window are counted, and one line
/// sums them up when the window ends (how many, by method, the first and the last record).
///
/// A tool that queues ten thousand changes in a second would otherwise write ten thousand journal lines: journald's
/// rate limit (`RateLimitBurst=10000` per `RateLimitIntervalSec=30s` by default) then drops the service's further
/// messages until the interval is over — errors included. People at the counter never reach the allowance.
///
/// Pure: the caller passes the time, and logs what comes back.
struct AuditAllowance {
    struct Caller: Hashable, Sendable {
        let uid: UInt32
        let pid: Int32
    }

    /// The calls of one caller's window that were counted instead of logged.
    struct Summary: Equatable, Sendable {
        let caller: Caller
        let calls: Int
        /// Calls by method, in the methods' order of first appearance.
        let methods: [MethodCalls]
        /// The record (or change) of the first and the last call counted.
        let first: String
        let last: String
    }

    struct MethodCalls: Equatable, Sendable {
        let name: String
        var calls: Int
    }

    enum Decision: Equatable, Sendable {
        /// Log this call's own line.
        case log
        /// Counted: the window's summary will name it. `first`: the first call counted in its window (a summary is
        /// now due at the window's end).
        case counted(first: Bool)
    }

    private struct Window {
        let start: ContinuousClock.Instant
        var logged = 0
        var counted = 0
        var methods: [MethodCalls] = []
        var first = ""
        var last = ""
    }

    let lines: Int
    let window: Duration
    /// Callers known before windows that ended are swept (each sweep keeps what is still open).
    let sweepAbove: Int
    private var windows: [Caller: Window] = [:]

    init(lines: Int = 20, window: Duration = .seconds(1), sweepAbove: Int = 64) {
        self.lines = lines
        self.window = window
        self.sweepAbove = sweepAbove
    }

    /// Callers with a window open (bounded: windows that ended go when many callers are known).
    var openWindows: Int { windows.count }

    /// The earliest end of a window that counted calls: when its summary is due.
    var nextSummaryDue: ContinuousClock.Instant? {
        windows.values.filter { $0.counted > 0 }.map { $0.start + window }.min()
    }

    /// Decides about one call at `now`, and returns the summaries of windows that ended by then — this caller's,
    /// and, when more than `sweepAbove` callers are known, everyone's (those ended without counting anything just go).
    mutating func admit(_ caller: Caller, method: String, subject: String, at now: ContinuousClock.Instant)
        -> (Decision, [Summary])
    {
        var ended: [Summary] = []
        if let open = windows[caller], now >= open.start + window {
            windows[caller] = nil
            if let summary = Self.summary(open, caller) { ended.append(summary) }
        }
        if windows.count > sweepAbove { ended += summaries(endedBy: now) }
        var current = windows[caller] ?? Window(start: now)
        let decision: Decision
        if current.logged < lines {
            current.logged += 1
            decision = .log
        } else {
            current.counted += 1
            if current.counted == 1 { current.first = subject }
            current.last = subject
            if let index = current.methods.firstIndex(where: { $0.name == method }) {
                current.methods[index].calls += 1
            } else {
                current.methods.append(MethodCalls(name: method, calls: 1))
            }
            decision = .counted(first: current.counted == 1)
        }
        windows[caller] = current
        return (decision, ended)
    }

    /// The summaries of the windows that ended by `now`; every ended window is forgotten.
    mutating func summaries(endedBy now: ContinuousClock.Instant) -> [Summary] {
        let ended = windows.filter { now >= $0.value.start + window }
        for caller in ended.keys { windows[caller] = nil }
        return ended.sorted { $0.value.start < $1.value.start }.compactMap { Self.summary($0.value, $0.key) }
    }

    /// Every summary still owed, ended or not (the daemon is stopping); every window is forgotten.
    mutating func remainingSummaries() -> [Summary] {
        defer { windows = [:] }
        return windows.sorted { $0.value.start < $1.value.start }.compactMap { Self.summary($0.value, $0.key) }
    }

    private static func summary(_ window: Window, _ caller: Caller) -> Summary? {
        guard window.counted > 0 else { return nil }
        return Summary(
            caller: caller, calls: window.counted, methods: window.methods, first: window.first, last: window.last)
    }
}
