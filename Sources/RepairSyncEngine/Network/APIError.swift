public import Foundation

/// How a request to the API failed, classified by what the engine must do about it.
public enum APIError: Error, Sendable, CustomStringConvertible {
    /// The API could not be reached at all (refused, DNS, connect timeout): the engine is offline. Nothing was sent.
    case unreachable(String)
    /// The request may have been sent but its outcome is unknown (connection cut, read timeout): retry with the
    /// same key.
    case interrupted(String)
    /// As `interrupted`, for an answer over the size limit for one answer (`TransportFailure.tooLarge`): a page
    /// asked for again with fewer records may fit.
    case tooLarge(String)
    /// An HTTP error status, from the API or from something in front of it.
    case http(HTTPFailure)
    /// A 2xx whose body is not what the contract says (e.g. truncated JSON, a portal's page): nothing of it is applied.
    case malformed(String)
    /// The TLS handshake failed (a refused certificate, no common TLS version): nothing was sent, and nothing will be
    /// until the certificate, `api.ca_file` or `api.tls_min_version` is put right. The text names the reason.
    case tls(String)

    public var description: String {
        switch self {
        case .unreachable(let detail): "API unreachable: \(detail)"
        case .interrupted(let detail): "request interrupted: \(detail)"
        case .tooLarge(let detail): "answer too large: \(detail)"
        case .http(let failure): failure.description
        case .malformed(let detail): "malformed response: \(detail)"
        case .tls(let reason): reason
        }
    }

    /// Worth retrying later: 408, 429, 5xx, interrupted requests, malformed replies, and any error status whose body
    /// is not the API's JSON error (a proxy, a captive portal or a deploy answered, not the API).
    public var isTransient: Bool {
        switch self {
        case .unreachable, .interrupted, .tooLarge, .malformed: true
        case .tls: false
        case .http(let failure):
            failure.status == 408 || failure.status == 429 || failure.status >= 500 || !failure.isAPIAnswer
        }
    }

    /// 401/403 from the API itself (a proxy's 401 page is transient, never a reason to stop for a token).
    public var isAuthentication: Bool {
        guard case .http(let failure) = self, failure.isAPIAnswer else { return false }
        return failure.status == 401 || failure.status == 403
    }

    /// A final answer about this request from the API (docs/api.md section 5: a status it remembers for the key):
    /// the request's fate is known, so an idempotency key that got it is settled.
    public var isFinalAnswer: Bool {
        guard case .http(let failure) = self, failure.isAPIAnswer else { return false }
        return !isTransient && !isAuthentication
    }

    /// The API failing as a whole, not this request: 502, 503 (without `Retry-After`: with one it is a wait), 504,
    /// or an error page that is not the API's (a proxy's, a maintenance page). However long such an outage lasts, it
    /// never uses up a change's attempts.
    public var isOutage: Bool {
        guard case .http(let failure) = self else { return false }
        return [502, 503, 504].contains(failure.status) || !failure.isAPIAnswer
    }

    /// The request never left this machine (no connection, or a TLS handshake that failed): a change is not in
    /// doubt and no attempt is counted against it.
    public var sentNothing: Bool {
        switch self {
        case .unreachable, .tls: true
        default: false
        }
    }

    public var status: Int? {
        if case .http(let failure) = self { return failure.status }
        return nil
    }

    /// The API's error code (`not_found`, `version_mismatch`…); nil when the answer is not the API's JSON error.
    public var code: String? {
        if case .http(let failure) = self { return failure.code }
        return nil
    }

    public var retryAfter: Duration? {
        if case .http(let failure) = self { return failure.retryAfter }
        return nil
    }
}

/// An HTTP error status and what came with it.
public struct HTTPFailure: Sendable, CustomStringConvertible {
    public var status: Int
    /// The API's error code: set only when the body is the API's JSON error (docs/api.md section 6).
    public var code: String?
    public var message: String
    public var field: String?
    /// How long the server asked to wait (429, 503), already capped.
    public var retryAfter: Duration?
    public var body: Data
    /// The answer is a replay of an earlier outcome for the same idempotency key (`Idempotent-Replayed: true`).
    public var replayed: Bool

    public init(
        status: Int, code: String?, message: String, field: String? = nil, retryAfter: Duration? = nil,
        body: Data = Data(), replayed: Bool = false
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retryAfter = retryAfter
        self.body = body
        self.replayed = replayed
    }

    /// The body is the API's JSON error, so the status is the API's decision and not a proxy's: the error shape with
    /// a code docs/api.md section 6 names. A gateway's JSON error of the same shape with a code of its own
    /// (`{"error":{"code":"ResourceNotFound"}}`) decides nothing — its 404 would delete a record, its 422 kill a
    /// change. For 401 and 403 any code in that shape will do: stopping for a token loses nothing.
    public var isAPIAnswer: Bool { Self.isAPIAnswer(status: status, code: code) }

    /// `isAPIAnswer` for an answer of `status` whose body's API error code is `code` (nil: not the API's JSON error),
    /// for a caller that has not built a failure (the change stream's refusals).
    public static func isAPIAnswer(status: Int, code: String?) -> Bool {
        guard let code else { return false }
        return contractCodes.contains(code) || status == 401 || status == 403
    }

    /// The error codes of docs/api.md section 6.
    public static let contractCodes: Set<String> = [
        "invalid_request", "unauthorized", "forbidden", "not_found", "duplicate_id", "cursor_expired",
        "version_mismatch", "invalid_value", "invalid_field", "idempotency_key_reused", "parent_not_found",
        "rate_limited", "internal", "unavailable",
    ]

    public var description: String {
        let origin =
            isAPIAnswer
            ? ""
            : code == nil
                ? " (not the API's JSON error: a proxy or portal answered?)"
                : " (an error code docs/api.md does not name: a gateway answered?)"
        return
            "HTTP \(status)\(code.map { " \($0)" } ?? "")\(field.map { " (field \($0))" } ?? ""): \(message)\(origin)"
    }
}
