public import RepairSyncEngine
public import RepairSyncProtocol

extension StatusSnapshot {
    /// The engine's status with the scheduler's view (connectivity, pause, the next run, retention) and the store's
    /// size: the `status` result and every `statusChanged`.
    public init(_ status: EngineStatus, scheduler: SchedulerService, storeBytes: Int64) {
        let schedule = scheduler.snapshot
        var step: String?
        var progress: Thousandths?
        var message: String?
        switch status.phase {
        case .syncing(let current, let fraction):
            step = current.rawValue
            progress = Thousandths(fraction)
        case .error(let text):
            message = text
        default: break
        }
        let metrics = status.metrics
        self.init(
            state: SyncState(rawValue: status.phase.name), step: step, progress: progress, message: message,
            online: schedule.online, probe: scheduler.probe.mode.rawValue,
            lastOnlineChange: scheduler.probe.lastChange.map(Timestamp.init), paused: schedule.paused,
            nextRun: schedule.nextRunAt.map { NextRun(at: Timestamp($0), reason: schedule.nextRunReason) },
            lastSyncAt: status.lastSyncAt, lastSuccessAt: status.lastSuccessAt, pending: status.pending,
            failed: status.failed, dead: status.dead, held: status.held, openConflicts: status.openConflicts,
            clockOffsetMs: status.clockOffsetMilliseconds,
            collections: status.collections.map { collection in
                CollectionState(
                    collection: collection.collection.name, state: collection.state.rawValue,
                    records: collection.records,
                    hasCursor: collection.hasCursor, lastSyncedAt: collection.lastSyncedAt,
                    lastSuccessAt: collection.lastSuccessAt, lastError: collection.lastError)
            },
            storeBytes: storeBytes,
            retention: schedule.lastRetention.map { report in
                Retention(
                    at: schedule.lastRetentionAt.map(Timestamp.init), orders: report.orders, devices: report.devices,
                    tickets: report.tickets, messages: report.messages, conflicts: report.conflicts)
            },
            metrics: Metrics(
                runs: metrics.runs, successes: metrics.successes, failures: metrics.failures,
                lastDurationMs: metrics.lastDurationMilliseconds,
                averageDurationMs: metrics.averageDurationMilliseconds,
                conflictsByOutcome: metrics.conflictsByOutcome))
        if let stream = scheduler.events?.snapshot {
            events = stream.state.rawValue
            eventsSince = Timestamp(stream.since)
        } else {
            events = EventStreamClient.State.off.rawValue
        }
        link = status.link.map { link in
            Link(
                rttMs: link.roundTripMilliseconds, throughputBytesPerSecond: link.throughputBytesPerSecond,
                quality: link.verdict.rawValue, pageSize: link.pageSize)
        }
    }
}
