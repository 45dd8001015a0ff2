internal import RepairSyncEngine
internal import RepairSyncProtocol

extension SyncRunReport {
    /// A run's report as the socket shows it.
    init(_ report: SyncReport) {
        self.init(
            run: report.run, stop: report.stop, offline: report.offline, pushed: report.pushed,
            pushedByCollection: report.pushedByCollection, pushFailures: report.pushFailures, dead: report.dead,
            conflicts: report.conflicts, pulled: report.pulled, deleted: report.deleted,
            durationMilliseconds: report.durationMilliseconds, retryAfterMilliseconds: report.retryAfterMilliseconds,
            nextChangeDueMilliseconds: report.nextChangeDueMilliseconds, failedCollections: report.failedCollections,
            rewound: report.rewound, staleCopies: report.staleCopies, resynced: report.resynced)
    }
}
