internal import AsyncHTTPClient
internal import Foundation
internal import GRDB
internal import RepairSyncControl
internal import RepairSyncEngine
internal import RepairSyncModels

#if canImport(Glibc)
    internal import Glibc
#endif

/// `repairctl doctor`: everything a support call would ask about, one check per line. What needs the daemon (the
/// API with its token, the clock, the store, changes, connectivity) is asked of it; without it those checks say
/// so, and the rest still runs: the configuration and the token file are read directly, the API's health is
/// checked without a token, and the store is read read-only if this user may.
public enum Doctor {
    public static func run(configPath: String, socketPath: String, environment: [String: String]) async -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let configuration: DaemonConfiguration?
        do {
            let loaded = try await ConfigurationLoader.load(path: configPath, environment: environment, readSecrets: false)
            let unknown = loaded.unknownKeys.isEmpty ? "" : " (unknown keys ignored: \(loaded.unknownKeys.joined(separator: ", ")))"
            checks.append(
                loaded.unknownKeys.isEmpty
                    ? DoctorCheck("config", .ok, "\(configPath) is valid")
                    : DoctorCheck("config", .warn, "\(configPath) is valid\(unknown)", fix: "remove or correct those keys"))
            configuration = loaded
        } catch {
            checks.append(DoctorCheck("config", .fail, "\(error)", fix: "correct the key named; `repairsyncd --check-config` verifies"))
            configuration = nil
        }
        if let configuration { checks.append(tokenFileCheck(configuration.api.tokenFile)) }

        // The daemon: the socket, then its own checks.
        let (socketCheck, client) = connect(socketPath)
        checks.append(socketCheck)
        if let client {
            do {
                guard case .array(let results) = try client.call("doctor") else { throw ControlClient.Failure.protocolError("not a list") }
                checks += results.compactMap(DoctorCheck.init(json:))
                return checks
            } catch ControlClient.Failure.rpc(let error) where error.code == -32004 {
                checks.append(
                    DoctorCheck(
                        "daemon checks", .warn, "the daemon answers status only to this user",
                        fix: "run doctor as root or as a member of the socket's group"))
            } catch {
                checks.append(DoctorCheck("daemon checks", .warn, "the daemon did not answer the checks: \(error)"))
            }
        }
        guard let configuration else { return checks }
        checks += await offlineChecks(configuration)
        return checks
    }

    /// The `api` line when /health failed: a TLS failure points at the `certificate` line, which names the reason.
    static func apiFailure(_ baseURL: String, _ error: APIError) -> DoctorCheck {
        if case .tls = error {
            return DoctorCheck(
                "api", .fail, "\(baseURL): the TLS handshake failed, nothing was sent (see the certificate line)",
                fix: "fix what the certificate line says; repairsyncd never falls back to plain http")
        }
        return DoctorCheck(
            "api", .fail, "\(baseURL) does not answer: \(error)", fix: "check the network, the firewall and api.base_url")
    }

    /// The token file: present, and private to its owner.
    static func tokenFileCheck(_ path: String) -> DoctorCheck {
        if path.hasPrefix("(environment") { return DoctorCheck("token file", .ok, "the token comes from the environment") }
        guard let file = FileOwnership(path: path) else {
            return DoctorCheck(
                "token file", .fail, "the token file \(path) does not exist",
                fix: "write the API token to \(path), alone on one line, mode 0600")
        }
        if file.readableByOthers {
            return DoctorCheck(
                "token file", .fail, "the token file \(path) is readable by others (mode \(file.octalMode))",
                fix: "chmod 600 \(path)")
        }
        return DoctorCheck(
            "token file", .ok, "\(path): owner \(file.ownerName ?? "uid \(file.ownerID)"), mode \(file.octalMode)")
    }

    static func connect(_ path: String) -> (DoctorCheck, ControlClient?) {
        guard let socket = FileOwnership(path: path) else {
            return (
                DoctorCheck(
                    "daemon", .fail, "no control socket at \(path): repairsyncd is not running",
                    fix: "start it: systemctl start repairsyncd"), nil
            )
        }
        let mode = socket.octalMode
        do {
            let client = try ControlClient(path: path)
            _ = try client.call("ping")
            return (DoctorCheck("daemon", .ok, "answering on \(path) (mode \(mode))"), client)
        } catch {
            return (DoctorCheck("daemon", .fail, error.description, fix: "start repairsyncd, or fix the socket's permissions"), nil)
        }
    }

    /// Without the daemon: the API's health (no token needed) and the store, read-only, if this user may read it.
    static func offlineChecks(_ configuration: DaemonConfiguration) async -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        // The daemon's own TLS and proxy settings, so the answer is the one the daemon gets.
        let settings = configuration.api.transport.settings()
        let http: HTTPClient
        do {
            http = try settings.makeHTTPClient()
        } catch {
            checks.append(DoctorCheck("api", .fail, "\(error)", fix: "correct api.ca_file or api.proxy"))
            return checks
        }
        let api = APIClient(
            configuration: .init(baseURL: configuration.api.baseURL, token: "", requestTimeout: configuration.probe.timeout),
            clock: SystemEngineClock(),
            transport: HTTPTransport(baseURL: configuration.api.baseURL, http: http, settings: settings))
        var healthError: APIError?
        do {
            _ = try await api.health()
            checks.append(DoctorCheck("api", .ok, "\(configuration.api.baseURL) answers /health"))
        } catch {
            healthError = error
            checks.append(apiFailure(configuration.api.baseURL, error))
        }
        if let certificate = await CertificateCheck.run(api: api, healthError: healthError) { checks.append(certificate) }
        try? await http.shutdown()
        checks.append(DoctorCheck("token", .skipped, "checking the token needs the daemon"))
        let path = configuration.store.path
        guard FileManager.default.isReadableFile(atPath: path) else {
            checks.append(DoctorCheck("store", .skipped, "\(path) is not readable by this user (or does not exist)"))
            return checks
        }
        do {
            var options = Configuration()
            options.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: options)
            let problems = try await queue.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            let pending = try await queue.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE state <> 'dead'") ?? 0
            }
            checks.append(
                problems == ["ok"]
                    ? DoctorCheck("store", .ok, "\(path): quick_check ok, \(pending) changes pending")
                    : DoctorCheck(
                        "store", .fail, "\(path): \(problems.prefix(3).joined(separator: "; "))",
                        fix: "restore the last backup (docs/operations.md)"))
        } catch {
            checks.append(DoctorCheck("store", .warn, "\(path) could not be read: \(error)"))
        }
        return checks
    }
}
