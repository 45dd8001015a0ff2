internal import CSystemd
internal import Foundation
internal import Logging
internal import RepairSyncEngine
internal import RepairSyncModels
internal import ServiceLifecycle

/// What systemd is told while the daemon runs: `STATUS=` (e.g. "idle · 3 pending · last sync 12:03") when the status
/// changes — at most `statusInterval` apart: a burst of queued changes is one line, and its last status is always
/// sent — `WATCHDOG=1` at half of `WATCHDOG_USEC` — sent only after the engine actor answered, so a stuck daemon
/// stops feeding the watchdog and systemd restarts it — and `STOPPING=1` as soon as shutdown begins.
/// Without `NOTIFY_SOCKET` every message is a no-op.
struct SystemdService: Service {
    let engine: SyncEngine
    let scheduler: SchedulerService
    let metrics: SyncMetrics
    let logger: Logger

    /// How often, at most, the status line and the metrics' gauges follow the status: each queued change changes
    /// the pending count, and a tool queueing thousands a second would otherwise pay a datagram to systemd and a
    /// metrics update for each.
    static let statusInterval = Duration.milliseconds(250)

    func run() async throws {
        var microseconds: UInt64 = 0
        let watchdog: Duration? =
            sd_watchdog_enabled(0, &microseconds) > 0 ? .microseconds(Int64(microseconds / 2)) : nil
        if let watchdog { logger.info("systemd watchdog enabled", metadata: ["ping_every": "\(watchdog)"]) }
        await withDiscardingTaskGroup { group in
            group.addTask {
                var last = ""
                // The latest status only: what changed while this one waited below is one update, not many.
                for await status in await engine.statusUpdates(latestOnly: true) {
                    // Between runs: refresh the metrics' gauges and their text file.
                    if status.phase.name != "syncing" { metrics.publish(status, responses: engine.responseCounts) }
                    let text = Self.statusText(status, paused: scheduler.snapshot.paused)
                    if text != last {
                        Self.notify("STATUS=\(text)")
                        last = text
                    }
                    do {
                        try await Task.sleep(for: Self.statusInterval)
                    } catch {
                        return
                    }
                }
            }
            if let watchdog {
                group.addTask {
                    while !Task.isCancelled {
                        do {
                            try await Task.sleep(for: watchdog)
                        } catch {
                            return
                        }
                        _ = await engine.status  // the engine's actor answers: the daemon is not wedged
                        Self.notify("WATCHDOG=1")
                    }
                }
            }
            try? await gracefulShutdown()
            Self.notify("STOPPING=1\nSTATUS=stopping")
            group.cancelAll()
        }
    }

    /// "idle · 3 pending · last sync 12:03" — what `systemctl status repairsyncd` shows.
    static func statusText(_ status: EngineStatus, paused: Bool) -> String {
        var parts: [String] = [paused ? "\(status.phase.name) (paused)" : status.phase.name]
        parts.append("\(status.pending) pending")
        if status.dead > 0 { parts.append("\(status.dead) dead") }
        if status.openConflicts > 0 { parts.append("\(status.openConflicts) conflicts") }
        if let last = status.lastSuccessAt {
            parts.append("last sync \(localHourAndMinute(last))")
        } else {
            parts.append("never synced")
        }
        return parts.joined(separator: " · ")
    }

    /// "12:03" in the local time zone. This runs on every status change (each queued change), where creating a
    /// DateFormatter (an ICU formatter) cost more than queueing the change.
    static func localHourAndMinute(_ time: Timestamp) -> String {
        var seconds = time_t(time.millisecondsSince1970 / 1000)
        var local = tm()
        localtime_r(&seconds, &local)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(twoDigits(local.tm_hour)):\(twoDigits(local.tm_min))"
    }

    static func notify(_ state: String) { _ = sd_notify(0, state) }

    /// The listening socket systemd passed (socket activation), if any: the first of `LISTEN_FDS`, fd 3.
    static func inheritedSocket() -> Int32? {
        // SD_LISTEN_FDS_START is 3; sd_listen_fds also clears LISTEN_* so children do not inherit them.
        sd_listen_fds(1) >= 1 ? 3 : nil
    }
}
