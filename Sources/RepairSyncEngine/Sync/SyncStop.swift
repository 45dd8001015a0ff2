/// Why a sync run stopped before the end. Each leaves the store consistent: what was committed stays.
public enum SyncStop: Error, Sendable, Equatable, CustomStringConvertible {
    /// The API could not be reached.
    case offline(String)
    /// 401/403: nothing is marked failed; the run waits for a valid token.
    case authentication(String)
    /// 429: no request until the server's Retry-After has passed.
    case rateLimited(String)
    /// Anything else (5xx on a page, malformed page, store error): recorded, retried by the next run.
    case failed(String)
    /// The engine was asked to stop (the daemon is shutting down): the run ended at a request boundary.
    case stopped

    public var description: String {
        switch self {
        case .offline(let detail): "offline: \(detail)"
        case .authentication(let detail): "authentication failed: \(detail)"
        case .rateLimited(let detail): "rate limited: \(detail)"
        case .failed(let detail): detail
        case .stopped: "stopped"
        }
    }

    static func from(_ error: APIError) -> SyncStop {
        if case .unreachable(let detail) = error { return .offline(detail) }
        if error.isAuthentication { return .authentication(error.description) }
        if error.status == 429 { return .rateLimited(error.description) }
        return .failed(error.description)
    }
}
