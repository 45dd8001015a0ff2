internal import GRDB

/// The counts the status shows of the outbox and the conflict log, read in one transaction with the generation the
/// store's triggers raise whenever one of them changes (`status_generation`): of two readings, the one with the
/// higher generation is the newer, wherever and in whatever order they were read.
struct StatusCounts: Sendable, Hashable {
    var generation: Int64
    var outbox: Outbox.Counts
    var openConflicts: Int
    var conflictsByOutcome: [String: Int]

    static func read(_ db: Database) throws -> StatusCounts {
        StatusCounts(
            generation: try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM status_generation")) ?? 0,
            outbox: try Outbox.counts(db), openConflicts: try ConflictLog.openCount(db),
            conflictsByOutcome: try ConflictLog.countsByOutcome(db))
    }

    /// Shows these counts in `status`.
    func apply(to status: inout EngineStatus) {
        status.pending = outbox.pending
        status.failed = outbox.failed
        status.dead = outbox.dead
        status.held = outbox.held
        status.openConflicts = openConflicts
        status.metrics.conflictsByOutcome = conflictsByOutcome
    }
}
