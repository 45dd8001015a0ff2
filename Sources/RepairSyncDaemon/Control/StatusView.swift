internal import Foundation
public import RepairSyncControl
public import RepairSyncEngine
internal import RepairSyncModels

/// The `status` result and `statusChanged` params: one stable, documented shape (docs/rpc.md) for `repairctl status`,
/// the badge and any other tool.
public enum StatusView {
    /// The replica's size on disk (database and WAL).
    static func storeBytes(_ scheduler: SchedulerService) -> Int {
        guard let path = scheduler.storePath else { return 0 }
        return [path, path + "-wal"].compactMap { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int }
            .reduce(0, +)
    }

    public static func json(_ status: EngineStatus, scheduler: SchedulerService) -> JSONValue {
        let schedule = scheduler.snapshot
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var phase: [(key: String, value: JSONValue)] = [("state", .string(status.phase.name))]
        switch status.phase {
        case .syncing(let step, let progress):
            phase.append(("step", .string(step.rawValue)))
            phase.append(("progress", .number(String(format: "%.3f", progress))))
        case .error(let message):
            phase.append(("message", .string(message)))
        default: break
        }
        let collections: [JSONValue] = status.collections.map { collection in
            .object([
                ("collection", .string(collection.collection.name)),
                ("state", .string(collection.state.rawValue)),
                ("records", .number(collection.records)),
                ("hasCursor", .bool(collection.hasCursor)),
                ("lastSyncedAt", .optionalString(collection.lastSyncedAt?.rfc3339)),
                ("lastSuccessAt", .optionalString(collection.lastSuccessAt?.rfc3339)),
                ("lastError", .optionalString(collection.lastError)),
            ])
        }
        let metrics = status.metrics
        let members: [(key: String, value: JSONValue)] =
            phase + [
                ("online", .bool(schedule.online)),
                ("probe", .string(scheduler.probe.mode.rawValue)),
                ("lastOnlineChange", .optionalString(scheduler.probe.lastChange.map(formatter.string(from:)))),
                ("paused", .bool(schedule.paused)),
                (
                    "nextRun",
                    schedule.nextRunAt.map { at in
                        .object([("at", .string(formatter.string(from: at))), ("reason", .optionalString(schedule.nextRunReason))])
                    } ?? .null
                ),
                ("lastSyncAt", .optionalString(status.lastSyncAt?.rfc3339)),
                ("lastSuccessAt", .optionalString(status.lastSuccessAt?.rfc3339)),
                ("pending", .number(status.pending)),
                ("failed", .number(status.failed)),
                ("dead", .number(status.dead)),
                ("held", .number(status.held)),
                ("openConflicts", .number(status.openConflicts)),
                ("clockOffsetMs", .number(String(status.clockOffsetMilliseconds))),
                ("collections", .array(collections)),
                ("storeBytes", .number(String(storeBytes(scheduler)))),
                (
                    "retention",
                    schedule.lastRetention.map { report in
                        .object([
                            ("at", .optionalString(schedule.lastRetentionAt.map(formatter.string(from:)))),
                            ("orders", .number(report.orders)), ("devices", .number(report.devices)),
                            ("tickets", .number(report.tickets)), ("messages", .number(report.messages)),
                        ])
                    } ?? .null
                ),
                (
                    "metrics",
                    .object([
                        ("runs", .number(metrics.runs)),
                        ("successes", .number(metrics.successes)),
                        ("failures", .number(metrics.failures)),
                        ("lastDurationMs", metrics.lastDurationMilliseconds.map { .number(String($0)) } ?? .null),
                        ("averageDurationMs", metrics.averageDurationMilliseconds.map { .number(String($0)) } ?? .null),
                        (
                            "conflictsByOutcome",
                            .object(metrics.conflictsByOutcome.sorted { $0.key < $1.key }.map { ($0.key, .number($0.value)) })
                        ),
                    ])
                ),
            ]
        return .object(members)
    }
}
