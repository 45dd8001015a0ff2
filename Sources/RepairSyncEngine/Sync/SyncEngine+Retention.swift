public import RepairSyncModels

extension SyncEngine {
    /// Removes the records `retention.days` lets go (`Retention`: collected or cancelled orders and closed tickets
    /// last updated more than `days` ago, never one a pending change or an open conflict needs). Outside the actor:
    /// its batches are short transactions of their own, and runs and local changes go on meanwhile. The status counts
    /// are the caller's to refresh (`refreshCounts`) when anything went, once it has noted the pass.
    ///
    /// ```swift
    /// let report = try await engine.applyRetention(days: 90)   // after a successful full run
    /// if report.total > 0 { await engine.refreshCounts() }
    /// ```
    public nonisolated func applyRetention(days: Int, now: Timestamp = .now()) async throws -> Retention.Report {
        try await Retention(store: store, days: days).run(now: now)
    }
}
