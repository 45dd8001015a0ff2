/// Why a sync run stopped before the end. Each leaves the store consistent: what was committed stays.
public enum SyncStop: Error, Sendable, Equatable, CustomStringConvertible {
    /// The API could not be reached.
    case offline(String)
    /// 401/403: nothing is marked failed; the run waits for a valid token.
    case authentication(String)
    /// 429 (or 503 with Retry-After): no request until the server's Retry-After has passed.
    case rateLimited(String)
    /// The TLS handshake with the API failed (a refused certificate, no common TLS version): named, never retried
    /// over plain HTTP; the schedule backs off until it is fixed.
    case tls(String)
    /// Anything else (5xx on a page, malformed page, store error): recorded, retried by the next run.
    case failed(String)
    /// The engine was asked to stop (the daemon is shutting down): the run ended at a request boundary.
    case stopped

    public var description: String {
        switch self {
        case .offline(let detail): "offline: \(detail)"
        case .authentication(let detail): "authentication failed: \(detail)"
        case .rateLimited(let detail): "rate limited: \(detail)"
        case .tls(let reason): reason
        case .failed(let detail): detail
        case .stopped: "stopped"
        }
    }

    static func from(_ error: APIError) -> SyncStop {
        if case .unreachable(let detail) = error { return .offline(detail) }
        if case .tls(let reason) = error { return .tls(reason) }
        if error.isAuthentication { return .authentication(error.description) }
        if isServerAskingToWait(error) { return .rateLimited(error.description) }
        return .failed(error.description)
    }

    /// A 429, or a 503 with `Retry-After`: no request of any kind until the time is up (the client's gate holds
    /// them), so the run stops and the scheduler comes back then.
    static func isServerAskingToWait(_ error: APIError) -> Bool {
        error.status == 429 || (error.status == 503 && error.retryAfter != nil)
    }

    /// Ends the whole run (nothing else can succeed now), as opposed to one collection's failure.
    var endsRun: Bool {
        switch self {
        case .offline, .authentication, .rateLimited, .tls, .stopped: true
        case .failed: false
        }
    }
}
