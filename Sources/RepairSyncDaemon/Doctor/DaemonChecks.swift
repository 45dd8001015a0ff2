internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol
internal import RepairSyncStore

/// The checks the running daemon makes for `doctor` (it holds the token and the store): the configuration it runs
/// with (read again now), the token file, the API and the token, the clock, the store, the changes, connectivity
/// and the last sync.
struct DaemonChecks {
    let services: ControlServices

    func run() async -> [DoctorCheck] {
        let configuration = services.configuration()
        var checks: [DoctorCheck] = []
        let (config, _) = await ConfigurationChecks.file(
            services.configPath, environment: ProcessInfo.processInfo.environment)
        checks.append(config)
        checks.append(ConfigurationChecks.tokenFile(configuration.api.tokenFile))
        let diagnosis = await services.engine.diagnoseAPI()
        let api = apiChecks(diagnosis, transport: configuration.api.transport)
        checks += api.prefix(1)
        // After the api line: the certificate it presents, under the daemon's own trust and proxy settings.
        if let certificate = await CertificateCheck.run(
            baseURL: diagnosis.baseURL, settings: configuration.api.transport.settings(),
            tlsFailure: diagnosis.tlsFailure, healthFailed: diagnosis.healthError != nil)
        {
            checks.append(certificate)
        }
        checks += api.dropFirst()
        let engine = services.engine
        do {
            let health = try await BlockingWork.run { engine.storeHealth() }
            checks.append(storeCheck(health))
            if let path = health.path,
                let kept = keptAsideCheck(try await BlockingWork.run { ReplicaStore.keptAside(beside: path) })
            {
                checks.append(kept)
            }
        } catch {
            checks.append(DoctorCheck("store", .fail, "the check could not run: \(error)"))
        }
        checks += await changeChecks(interval: configuration.sync.interval)
        return checks
    }

    func apiChecks(_ diagnosis: APIDiagnosis, transport: DaemonConfiguration.Transport) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        if let error = diagnosis.healthError {
            checks.append(
                Doctor.apiFailure(diagnosis.baseURL, error, tls: diagnosis.tlsFailure != nil, transport: transport))
        } else {
            checks.append(DoctorCheck("api", .ok, "\(diagnosis.baseURL) answers /health"))
        }
        switch diagnosis.token {
        case .accepted:
            checks.append(DoctorCheck("token", .ok, "the API accepts the token"))
        case .refused(let answer):
            checks.append(
                DoctorCheck(
                    "token", .fail, "the API refused the token (\(answer))",
                    fix: "put a valid token in the token file (or credential) and restart repairsyncd"))
        case .unknown(let reason):
            checks.append(
                DoctorCheck("token", .warn, "could not check the token: \(reason)", fix: "check the api line"))
        }
        if let offset = diagnosis.clockOffsetMilliseconds {
            let seconds = Double(abs(offset)) / 1000
            checks.append(
                seconds > 60
                    ? DoctorCheck(
                        "clock", .warn, "the workstation clock is \(Int(seconds)) s off the server's",
                        fix: "turn on time synchronisation (timedatectl set-ntp true)")
                    : DoctorCheck("clock", .ok, "\(offset) ms off the server's clock"))
        } else {
            checks.append(DoctorCheck("clock", .skipped, "needs the API"))
        }
        return checks
    }

    func storeCheck(_ health: StoreHealth) -> DoctorCheck {
        guard let path = health.path else { return DoctorCheck("store", .skipped, "in memory") }
        let free = health.freeBytes.map { "\($0 / 1_048_576) MiB free" } ?? "free space unknown"
        let summary = "\(path): \(health.bytes / 1_048_576) MiB, \(free)"
        if !health.problems.isEmpty {
            return DoctorCheck(
                "store", .fail, "\(summary); quick_check: \(health.problems.prefix(3).joined(separator: "; "))",
                fix: "stop the daemon, restore the last backup (docs/operations.md), start it")
        }
        if let free = health.freeBytes, free < 100 * 1_048_576 {
            return DoctorCheck(
                "store", .warn, summary, fix: "free disk space: the daemon refuses changes on a full disk")
        }
        return DoctorCheck("store", .ok, summary + ", quick_check ok")
    }

    /// Damaged stores kept aside beside the store: the local changes waiting in one never reached the server, and
    /// the status (the fresh replica's) does not count them.
    func keptAsideCheck(_ kept: [ReplicaStore.KeptAside]) -> DoctorCheck? {
        guard !kept.isEmpty else { return nil }
        let detail = kept.map { copy in
            copy.path + ": "
                + (copy.unsentChanges.map { "\($0) local change(s) were waiting in it" } ?? "its outbox cannot be read")
        }.joined(separator: "; ")
        guard kept.contains(where: { $0.unsentChanges != 0 }) else { return DoctorCheck("kept aside", .ok, detail) }
        return DoctorCheck(
            "kept aside", .warn, detail,
            fix:
                "redo by hand what must reach the server (docs/operations.md, the store is damaged), then delete the kept file"
        )
    }

    func changeChecks(interval: Duration) async -> [DoctorCheck] {
        let status = await services.engine.status
        let scheduler = services.scheduler
        var checks: [DoctorCheck] = []
        let changes = "\(status.pending) pending, \(status.dead) dead, \(status.openConflicts) open conflicts"
        if status.dead > 0 {
            checks.append(
                DoctorCheck(
                    "changes", .warn, changes,
                    fix:
                        "see `repairctl pending --failed`, fix the cause, then `repairctl retry` (or `repairctl discard SEQ`)"
                ))
        } else if status.openConflicts > 0 {
            checks.append(
                DoctorCheck("changes", .warn, changes, fix: "decide them: `repairctl conflicts`, `repairctl resolve`"))
        } else {
            checks.append(DoctorCheck("changes", .ok, changes))
        }
        let since = scheduler.probe.lastChange.map { " since \(Timestamp($0).rfc3339)" } ?? ""
        checks.append(
            scheduler.snapshot.online
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
                DoctorCheck("last sync", .warn, "no successful sync yet", fix: "see `repairctl status` and the journal")
            )
        }
        return checks
    }
}
