internal import RepairSyncEngine
internal import Synchronization

/// What one seed did and found.
public struct SimulationResult: Sendable {
    public var seed: UInt64
    /// Broken invariants, in the order found (empty: the seed passed).
    public var violations: [String]
    /// The operations performed, replayable with `Simulator.replay`.
    public var operations: [SimOperation]
    /// A readable account of the run (when tracing).
    public var trace: [String]
    public var coverage: SimCoverage

    public var passed: Bool { violations.isEmpty }
}

/// What the seeds reached: operations, deliveries, crash points, policies and the engine's own outcomes.
public struct SimCoverage: Sendable, Codable, Equatable {
    public var operations: [String: Int] = [:]
    public var deliveries: [String: Int] = [:]
    public var crashes: [String: Int] = [:]
    public var outcomes: [String: Int] = [:]
    /// Seeds per conflict policy of orders and of devices ("orders: merge").
    public var policies: [String: Int] = [:]
    public var runs = 0

    mutating func count(_ operation: SimOperation) {
        let name: String =
            switch operation {
            case .localUpdate: "local update"
            case .localUpdateLastWritten: "local update of the record written last"
            case .localUpdateInFlight: "local update of a field in flight"
            case .localMessage: "local message"
            case .localCreate: "local create (booking in)"
            case .toolInsert: "another program's insert"
            case .queueInserted: "queueChange for an insert"
            case .externalWrite: "another program's write"
            case .queueExternal: "queueChange"
            case .retryDead: "retry"
            case .discardDead: "discard"
            case .decideConflict: "conflict decision"
            case .serverEdit: "server edit"
            case .serverDelete: "server delete"
            case .serverRecreate: "server re-create"
            case .serverRewind: "server history rewind"
            case .serverCreateMessage: "server message"
            case .expireCursors: "cursors expired"
            case .serverRestore: "server restored from a backup"
            case .startSync(.resync): "resync started"
            case .startSync: "sync started"
            case .deliver: "delivery"
            case .crash: "crash"
            case .processCrash: "process killed (SIGKILL)"
            case .advance: "clock advanced"
            case .jumpWall: "wall clock set"
            }
        operations[name, default: 0] += 1
    }

    mutating func count(_ delivery: SimOperation.Delivery) {
        let name: String =
            switch delivery {
            case .normal: "normal"
            case .unreachable: "unreachable"
            case .lostRequest: "lost request"
            case .lostResponse: "lost response"
            case .serverError(let status): "\(status)"
            case .rateLimited(_, let asDate): asDate ? "429 (Retry-After date)" : "429 (Retry-After seconds)"
            case .unavailableRetryAfter: "503 with Retry-After"
            case .unauthorized: "401"
            case .proxyPage(let status): "proxy HTML \(status)"
            case .truncated: "truncated body"
            case .refused: "422 (a write refused)"
            case .notApplied: "200 without the values sent"
            case .stuckFeed: "stuck feed"
            case .emptyFeed: "empty feed"
            case .rotatingFeed: "rotating feed"
            case .stalePage: "stale page"
            case .staleCopies: "stale copies in a page"
            case .malformedRecord: "malformed record"
            case .cursorExpired: "410"
            }
        deliveries[name, default: 0] += 1
    }

    mutating func record(_ report: SyncReport) {
        if report.pushed > 0 { outcomes["changes pushed", default: 0] += report.pushed }
        if report.dead > 0 { outcomes["changes dead", default: 0] += report.dead }
        if report.conflicts > 0 { outcomes["conflicts resolved", default: 0] += report.conflicts }
        if report.rewound > 0 { outcomes["history rewinds followed", default: 0] += report.rewound }
        if report.staleCopies > 0 { outcomes["stale copies ignored", default: 0] += report.staleCopies }
        if !report.failedCollections.isEmpty {
            outcomes["collections failed alone", default: 0] += report.failedCollections.count
        }
        if report.deleted > 0 { outcomes["records deleted", default: 0] += report.deleted }
    }

    public mutating func merge(_ other: SimCoverage) {
        operations.merge(other.operations, uniquingKeysWith: +)
        deliveries.merge(other.deliveries, uniquingKeysWith: +)
        crashes.merge(other.crashes, uniquingKeysWith: +)
        outcomes.merge(other.outcomes, uniquingKeysWith: +)
        policies.merge(other.policies, uniquingKeysWith: +)
        runs += other.runs
    }
}

/// Reports of finished runs with the number of requests sent up to each one's end (engine events arrive on the
/// engine's executor), and the changes that waited to be sent when each ended (`SimOutbox.waiting`).
final class RunLog: Sendable {
    struct Finished {
        var report: SyncReport
        /// Requests sent by this run.
        var requests: Int
        /// Their positions in the request log.
        var range: Range<Int>
        /// The outbox entries (seq) that waited to be sent when the run ended.
        var waiting: [Int64]
    }

    private let state = Mutex<(reports: [(SyncReport, Int, [Int64])], lastCount: Int)>(([], 0))

    func finished(_ report: SyncReport, requests: Int, waiting: [Int64]) {
        state.withLock { $0.reports.append((report, requests, waiting)) }
    }

    /// The finished runs since the last call.
    func drain() -> [Finished] {
        state.withLock { state in
            var result: [Finished] = []
            for (report, total, waiting) in state.reports {
                result.append(
                    Finished(
                        report: report, requests: total - state.lastCount, range: state.lastCount..<total,
                        waiting: waiting))
                state.lastCount = total
            }
            state.reports.removeAll()
            return result
        }
    }
}
