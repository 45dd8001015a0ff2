internal import Foundation
internal import GRDB
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncStore

#if canImport(Glibc)
    internal import Glibc
#endif

/// The checks only the running daemon can make (it holds the token and the store): the API and the token, the
/// clock, the store, the changes, connectivity and the last sync.
struct DaemonChecks {
    let engine: SyncEngine
    let store: ReplicaStore
    let scheduler: SchedulerService
    let interval: Duration

    func run() async -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let api = engine.api
        var healthError: APIError?
        do {
            _ = try await api.health()
            checks.append(DoctorCheck("api", .ok, "\(api.configuration.baseURL) answers /health"))
        } catch {
            healthError = error
            checks.append(Doctor.apiFailure(api.configuration.baseURL, error))
        }
        if let certificate = await CertificateCheck.run(api: api, healthError: healthError) { checks.append(certificate) }
        do {
            _ = try await api.changes(.clients, cursor: nil, limit: 1)
            checks.append(DoctorCheck("token", .ok, "the API accepts the token"))
        } catch let error where error.isAuthentication {
            checks.append(
                DoctorCheck(
                    "token", .fail, "the API refused the token (\(error))",
                    fix: "put a valid token in the token file (or credential) and restart repairsyncd"))
        } catch {
            checks.append(DoctorCheck("token", .warn, "could not check the token: \(error)", fix: "check the api line"))
        }
        do {
            try await api.measureClockOffset()
            let offset = api.clockOffsetMilliseconds
            let seconds = Double(abs(offset)) / 1000
            checks.append(
                seconds > 60
                    ? DoctorCheck(
                        "clock", .warn, "the workstation clock is \(Int(seconds)) s off the server's",
                        fix: "turn on time synchronisation (timedatectl set-ntp true)")
                    : DoctorCheck("clock", .ok, "\(offset) ms off the server's clock"))
        } catch {
            checks.append(DoctorCheck("clock", .skipped, "needs the API"))
        }
        checks.append(storeCheck())
        checks += await changeChecks()
        return checks
    }

    func storeCheck() -> DoctorCheck {
        guard let path = store.path else { return DoctorCheck("store", .skipped, "in memory") }
        let problems = (try? store.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }) ?? ["unreadable"]
        let size = [path, path + "-wal"].compactMap {
            (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int
        }.reduce(0, +)
        let free =
            ((try? FileManager.default.attributesOfFileSystem(forPath: (path as NSString).deletingLastPathComponent))?[
                .systemFreeSize] as? NSNumber)?.intValue ?? -1
        let summary = "\(path): \(size / 1_048_576) MiB, \(free >= 0 ? "\(free / 1_048_576) MiB free" : "free space unknown")"
        if problems != ["ok"] {
            return DoctorCheck(
                "store", .fail, "\(summary); quick_check: \(problems.prefix(3).joined(separator: "; "))",
                fix: "stop the daemon, restore the last backup (docs/operations.md), start it")
        }
        if free >= 0, free < 100 * 1_048_576 {
            return DoctorCheck("store", .warn, summary, fix: "free disk space: the daemon refuses changes on a full disk")
        }
        return DoctorCheck("store", .ok, summary + ", quick_check ok")
    }

    func changeChecks() async -> [DoctorCheck] {
        let status = await engine.status
        var checks: [DoctorCheck] = []
        let changes = "\(status.pending) pending, \(status.dead) dead, \(status.openConflicts) open conflicts"
        if status.dead > 0 {
            checks.append(
                DoctorCheck(
                    "changes", .warn, changes, fix: "see `repairctl pending --failed`, fix the cause, then `repairctl retry`"))
        } else if status.openConflicts > 0 {
            checks.append(DoctorCheck("changes", .warn, changes, fix: "decide them: `repairctl conflicts`, `repairctl resolve`"))
        } else {
            checks.append(DoctorCheck("changes", .ok, changes))
        }
        let schedule = scheduler.snapshot
        let since = scheduler.probe.lastChange.map { " since \(Timestamp($0).rfc3339)" } ?? ""
        checks.append(
            schedule.online
                ? DoctorCheck("connectivity", .ok, "online (probe: \(scheduler.probe.mode.rawValue))\(since)")
                : DoctorCheck(
                    "connectivity", .fail, "offline (probe: \(scheduler.probe.mode.rawValue))\(since)",
                    fix: "the API is unreachable: check the network; changes wait and go out when it is back"))
        if let last = status.lastSuccessAt {
            let age = Int(Date().timeIntervalSince(last.date))
            let limit = Int(interval.components.seconds) * 2 + 60
            checks.append(
                age > limit
                    ? DoctorCheck(
                        "last sync", .warn, "last successful sync \(age / 60) min ago",
                        fix: "see `repairctl status` and the journal for the failing runs")
                    : DoctorCheck("last sync", .ok, "last successful sync \(age) s ago"))
        } else {
            checks.append(
                DoctorCheck("last sync", .warn, "no successful sync yet", fix: "see `repairctl status` and the journal"))
        }
        return checks
    }
}
