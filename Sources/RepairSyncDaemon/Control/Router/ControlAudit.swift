internal import Logging
internal import RepairSyncControlServer
internal import Synchronization

/// The audit trail of the control socket's mutating calls (`changes`), or of its refused calls (`refusals`): one line
/// per call (method, record, the caller's uid and pid), within each caller's allowance (`AuditAllowance`); beyond
/// it, one line per caller and window that counts the calls it did not log, when the window ends — or when the
/// daemon stops. So neither a bulk import nor a peer hammering methods it may not call can write past journald's
/// rate limit and have the daemon's other messages dropped.
final class ControlAudit: Sendable {
    /// What a trail's lines say, at which level, and whose calls share an allowance.
    struct Lines: Sendable {
        let each: String
        let beyond: String
        let level: Logger.Level
        /// One allowance per user, whatever its processes: refusals come from peers outside the group, who could
        /// otherwise start a process per 20 lines a second.
        let perUser: Bool

        static let changes = Lines(
            each: "control change requested", beyond: "control changes requested beyond the audit allowance",
            level: .notice, perUser: false)
        static let refusals = Lines(
            each: "control request refused", beyond: "control requests refused beyond the audit allowance",
            level: .warning, perUser: true)
    }

    private let logger: Logger
    private let lines: Lines
    private let allowance: Mutex<AuditAllowance>
    /// A window started counting: a summary is due at its end.
    private let counting: AsyncStream<Void>.Continuation
    private let countingSignals: AsyncStream<Void>

    init(logger: Logger, lines: Lines = .changes, allowance: AuditAllowance = AuditAllowance()) {
        self.logger = logger
        self.lines = lines
        self.allowance = Mutex(allowance)
        (countingSignals, counting) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Logs a call, or counts it when its caller is beyond the allowance. `subject`: the record, if any.
    func record(method: String, subject: String, peer: ControlPeer) {
        let caller = AuditAllowance.Caller(uid: peer.uid, pid: lines.perUser ? 0 : peer.pid)
        let now = ContinuousClock.now
        let (decision, ended) = allowance.withLock { $0.admit(caller, method: method, subject: subject, at: now) }
        for summary in ended { log(summary) }
        switch decision {
        case .log:
            var metadata: Logger.Metadata = ["method": "\(method)", "uid": "\(peer.uid)", "pid": "\(peer.pid)"]
            if !subject.isEmpty { metadata["id"] = "\(subject)" }
            logger.log(level: lines.level, "\(lines.each)", metadata: metadata)
        case .counted(let first):
            if first { counting.yield() }
        }
    }

    /// Logs each window's summary when the window ends, waiting (not polling) while no window counts anything.
    /// Returns when cancelled, after logging every summary still owed.
    func run() async {
        for await _ in countingSignals {
            while let due = allowance.withLock({ $0.nextSummaryDue }) {
                do {
                    try await Task.sleep(until: due, clock: .continuous)
                } catch {
                    break
                }
                let now = ContinuousClock.now
                for summary in allowance.withLock({ $0.summaries(endedBy: now) }) { log(summary) }
            }
            if Task.isCancelled { break }
        }
        for summary in allowance.withLock({ $0.remainingSummaries() }) { log(summary) }
    }

    private func log(_ summary: AuditAllowance.Summary) {
        var metadata: Logger.Metadata = [
            "uid": "\(summary.caller.uid)", "calls": "\(summary.calls)",
            "methods": "\(summary.methods.map { "\($0.name)=\($0.calls)" }.joined(separator: ","))",
        ]
        if !lines.perUser { metadata["pid"] = "\(summary.caller.pid)" }
        if !summary.first.isEmpty || !summary.last.isEmpty {
            metadata["first_id"] = "\(summary.first)"
            metadata["last_id"] = "\(summary.last)"
        }
        logger.log(level: lines.level, "\(lines.beyond)", metadata: metadata)
    }
}
