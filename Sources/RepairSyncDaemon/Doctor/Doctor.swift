internal import AsyncHTTPClient
internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncEngine
public import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// `repairsyncd doctor`: the checks that work without a running daemon, for when `repairctl doctor` cannot reach
/// it — the configuration, the token file, whether a daemon answers on the socket, the API's health, the token
/// (when this user may read it), and the store, read-only. Run it as root or as the daemon's user to see
/// everything; another user gets what it may read.
public enum Doctor {
    public static func run(configPath: String, environment: [String: String]) async -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let (configCheck, loaded) = await ConfigurationChecks.file(configPath, environment: environment)
        checks.append(configCheck)
        guard let configuration = loaded else { return checks }
        checks.append(ConfigurationChecks.tokenFile(configuration.api.tokenFile))
        checks.append(daemonCheck(configuration.control.socket))
        checks += await apiChecks(configuration)
        checks.append(storeCheck(configuration.store.path))
        return checks
    }

    /// The `api` line when /health failed: a TLS failure points at the `certificate` line, which names the reason;
    /// behind a proxy the fix names it (and where it was set), since it is as likely to be the cause as the network.
    static func apiFailure(_ baseURL: String, _ error: String, tls: Bool, transport: DaemonConfiguration.Transport)
        -> DoctorCheck
    {
        if tls {
            return DoctorCheck(
                "api", .fail, "\(baseURL): the TLS handshake failed, nothing was sent (see the certificate line)",
                fix: "fix what the certificate line says; repairsyncd never falls back to plain http")
        }
        return DoctorCheck(
            "api", .fail, "\(baseURL) does not answer: \(error)",
            fix: transport.proxy.map {
                "check the network, the firewall, api.base_url and the proxy \($0) (from \(transport.proxySource ?? .configuration))"
            } ?? "check the network, the firewall and api.base_url")
    }

    /// Whether a daemon answers on the socket (and the socket's mode).
    static func daemonCheck(_ path: String) -> DoctorCheck {
        guard let socket = FileOwnership(path: path) else {
            return DoctorCheck(
                "daemon", .fail, "no control socket at \(path): repairsyncd is not running",
                fix: "start it: systemctl start repairsyncd")
        }
        do {
            let client = try ControlClient(path: path)
            _ = try client.call(RPC.Ping.self)
            return DoctorCheck(
                "daemon", .ok, "answering on \(path) (mode \(socket.octalMode)); `repairctl doctor` has its own checks")
        } catch {
            return DoctorCheck(
                "daemon", .fail, error.description, fix: "start repairsyncd, or fix the socket's permissions")
        }
    }

    /// The API's health (no token needed), and the token when this user may read it.
    static func apiChecks(_ configuration: DaemonConfiguration) async -> [DoctorCheck] {
        // The daemon's own TLS and proxy settings, so the answer is the one the daemon gets.
        let settings = configuration.api.transport.settings()
        let http: HTTPClient
        do {
            http = try settings.makeHTTPClient()
        } catch {
            return [DoctorCheck("api", .fail, "\(error)", fix: "correct api.ca_file or api.proxy")]
        }
        let checks = await apiChecks(configuration, settings: settings, http: http)
        try? await http.shutdown()
        return checks
    }

    private static func apiChecks(_ configuration: DaemonConfiguration, settings: TransportSettings, http: HTTPClient)
        async -> [DoctorCheck]
    {
        var checks: [DoctorCheck] = []
        let url = configuration.api.baseURL
        func apiClient(token: String) -> APIClient {
            APIClient(
                configuration: .init(baseURL: url, token: token, requestTimeout: configuration.probe.timeout),
                clock: SystemEngineClock(), transport: HTTPTransport(baseURL: url, http: http, settings: settings))
        }
        let anonymous = apiClient(token: "")
        var healthError: APIError?
        do {
            _ = try await anonymous.health()
        } catch {
            healthError = error
        }
        var tlsFailure: String?
        if case .tls(let reason)? = healthError { tlsFailure = reason }
        if let healthError {
            checks.append(
                apiFailure(url, "\(healthError)", tls: tlsFailure != nil, transport: configuration.api.transport))
        } else {
            checks.append(DoctorCheck("api", .ok, "\(url) answers /health"))
        }
        if let certificate = await CertificateCheck.run(
            baseURL: url, settings: settings, tlsFailure: tlsFailure, healthFailed: healthError != nil)
        {
            checks.append(certificate)
        }
        guard healthError == nil else {
            checks.append(DoctorCheck("token", .skipped, "needs the API"))
            return checks
        }
        let token: Secret
        do {
            token = try ConfigurationLoader.readToken(configuration.api.tokenFile, checkOwnership: false)
        } catch {
            checks.append(
                DoctorCheck("token", .skipped, "this user cannot read the token (\(error.message)); run doctor as root")
            )
            return checks
        }
        let client = apiClient(token: token.value)
        do {
            _ = try await client.changes(.clients, cursor: nil, limit: 1)
            checks.append(DoctorCheck("token", .ok, "the API accepts the token"))
        } catch let error where error.isAuthentication {
            checks.append(
                DoctorCheck(
                    "token", .fail, "the API refused the token (\(error))",
                    fix: "put a valid token in \(configuration.api.tokenFile) and restart repairsyncd"))
        } catch {
            checks.append(DoctorCheck("token", .warn, "could not check the token: \(error)"))
        }
        return checks
    }

    /// The store read directly, read-only, if this user may read it.
    static func storeCheck(_ path: String) -> DoctorCheck {
        guard FileManager.default.isReadableFile(atPath: path) else {
            return DoctorCheck("store", .skipped, "\(path) is not readable by this user (or does not exist)")
        }
        do {
            let inspection = try StoreInspection.inspect(path: path)
            return inspection.problems.isEmpty
                ? DoctorCheck("store", .ok, "\(path): quick_check ok, \(inspection.pendingChanges) changes pending")
                : DoctorCheck(
                    "store", .fail, "\(path): \(inspection.problems.prefix(3).joined(separator: "; "))",
                    fix: "restore the last backup (docs/operations.md)")
        } catch {
            return DoctorCheck("store", .warn, "\(path) could not be read: \(error)")
        }
    }
}
