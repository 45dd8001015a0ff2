internal import RepairSyncModels

/// What a doctor asks of the API through the engine's client: is it there, does it take the token, how far off is
/// the clock. The token itself never leaves the client.
extension SyncEngine {
    /// The API's base URL.
    public nonisolated var apiBaseURL: String { api.configuration.baseURL }

    /// HTTP responses since start, by class (`2xx`, `4xx`, `offline`, …).
    public nonisolated var responseCounts: [String: Int] { api.responseCounts }

    /// Checks the API: `/health`, one authenticated request, and the clock offset (each independent of the others).
    public nonisolated func diagnoseAPI() async -> APIDiagnosis {
        var diagnosis = APIDiagnosis(baseURL: api.configuration.baseURL)
        do {
            _ = try await api.health()
        } catch {
            diagnosis.healthError = "\(error)"
            if case .tls(let reason) = error { diagnosis.tlsFailure = reason }
        }
        do {
            _ = try await api.changes(.clients, cursor: nil, limit: 1)
            diagnosis.token = .accepted
        } catch let error where error.isAuthentication {
            diagnosis.token = .refused("\(error)")
        } catch {
            diagnosis.token = .unknown("\(error)")
        }
        do {
            try await api.measureClockOffset()
            diagnosis.clockOffsetMilliseconds = api.clockOffsetMilliseconds
        } catch {
            diagnosis.clockOffsetMilliseconds = nil
        }
        return diagnosis
    }
}

/// The outcome of `diagnoseAPI`.
public struct APIDiagnosis: Sendable, Hashable {
    public enum Token: Sendable, Hashable {
        case accepted
        /// 401/403, with the API's answer (never the token).
        case refused(String)
        /// The request failed otherwise (offline, a 5xx…).
        case unknown(String)
    }

    public var baseURL: String
    /// Why `/health` failed; nil when it answered.
    public var healthError: String?
    /// Why the TLS handshake refused the API (an expired certificate, an unknown CA…); nil when it did not.
    public var tlsFailure: String?
    public var token: Token = .unknown("not checked")
    /// The workstation's clock minus the server's; nil when it could not be measured.
    public var clockOffsetMilliseconds: Int64?
}
