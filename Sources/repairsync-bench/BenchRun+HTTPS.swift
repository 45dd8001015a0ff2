import Foundation
import RepairSyncReliability

#if canImport(Glibc)
    import Glibc
#endif

/// Scenario 1b: the large shop's initial sync over HTTPS (a second `repair-api-dev` on the same data, serving a
/// certificate of a throwaway CA that the daemon trusts through `api.ca_file`), beside the plain-HTTP one.
extension BenchRun {
    func httpsInitialSync(plain: InitialSync) async throws -> [ResultRow] {
        Log.say("==> initial sync of the large shop over HTTPS")
        let ca = try ThrowawayCA(directory: plan.path("tls"))
        let issued = try ca.issue()
        let server = try await APIServerProcess(
            database: plan.path("large-backend.sqlite"), orders: plan.orders,
            logPath: plan.path("large-backend-https.log"),
            extra: ["--tls-cert", issued.certificatePath, "--tls-key", issued.keyPath])
        defer { server.process.signal(SIGTERM) }
        guard server.baseURL.hasPrefix("https://") else { throw BenchError("the HTTPS server said \(server.baseURL)") }
        let daemon = try Self.daemon(directory: plan.path("daemon-large-https"), baseURL: server.baseURL)
        daemon.environment["REPAIRSYNCD_API_CA_FILE"] = ca.certificatePath
        defer {
            daemon.process?.signal(SIGKILL)
            daemon.notify.close()
        }
        let (status, time) = try await Self.startAndWaitForFirstRun(daemon)
        try Self.requireSuccess(status)
        let records = Self.records(status)
        guard records == plain.records else {
            throw BenchError("over HTTPS \(records) records, over HTTP \(plain.records)")
        }
        Log.say(
            "    repairsyncd over HTTPS: \(records) records in \(Format.seconds(time)) (HTTP: \(Format.seconds(plain.time)))"
        )
        await daemon.stop()
        await server.stop()
        let ratio = time / plain.time
        return [
            ResultRow(
                scenario: "initial sync over HTTPS, \(records) records", measured: Format.seconds(time),
                baseline: "plain HTTP (best of 2 above): \(Format.seconds(plain.time))", ratio: Format.ratio(ratio),
                target: "≤ 1.25× plain HTTP", passed: ratio <= 1.25)
        ]
    }
}
