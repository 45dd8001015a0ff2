public import Foundation

/// How a request to the API failed, classified by what the engine must do about it.
public enum APIError: Error, Sendable, CustomStringConvertible {
    /// The API could not be reached at all (refused, DNS, connect timeout): the engine is offline.
    case unreachable(String)
    /// The request was sent but its outcome is unknown (connection cut, read timeout): retry with the same key.
    case interrupted(String)
    /// The server answered with an HTTP error.
    case http(status: Int, code: String?, message: String, field: String?, retryAfter: Duration?, body: Data)
    /// A 2xx whose body is not what the contract says (e.g. truncated JSON): nothing of it is applied.
    case malformed(String)

    public var description: String {
        switch self {
        case .unreachable(let detail): "API unreachable: \(detail)"
        case .interrupted(let detail): "request interrupted: \(detail)"
        case .http(let status, let code, let message, let field, _, _):
            "HTTP \(status)\(code.map { " \($0)" } ?? "")\(field.map { " (field \($0))" } ?? ""): \(message)"
        case .malformed(let detail): "malformed response: \(detail)"
        }
    }

    /// Worth retrying later: 408, 429, 5xx, interrupted requests and malformed replies.
    public var isTransient: Bool {
        switch self {
        case .unreachable, .interrupted, .malformed: true
        case .http(let status, _, _, _, _, _): status == 408 || status == 429 || status >= 500
        }
    }

    public var isAuthentication: Bool {
        if case .http(let status, _, _, _, _, _) = self { return status == 401 || status == 403 }
        return false
    }

    public var status: Int? {
        if case .http(let status, _, _, _, _, _) = self { return status }
        return nil
    }

    public var retryAfter: Duration? {
        if case .http(_, _, _, _, let retryAfter, _) = self { return retryAfter }
        return nil
    }
}
