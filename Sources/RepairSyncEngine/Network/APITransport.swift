public import Foundation

/// One request to the API, as the engine builds it: a path under the base URL (with its query), headers and body.
public struct TransportRequest: Sendable {
    public var method: String
    /// Path and query, e.g. `/api/v1/orders/changes?limit=500`.
    public var path: String
    public var headers: [(name: String, value: String)]
    public var body: Data?

    public init(method: String, path: String, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The first value of a header (names compare case-insensitively).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// What came back: any status, its headers and its whole body.
public struct TransportResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data
    /// When the answer arrived and its size on the wire, for the link meter; nil from a transport that does not time
    /// its requests (the simulator's).
    public var timing: TransportTiming?

    public init(
        status: Int, headers: [(name: String, value: String)] = [], body: Data = Data(), timing: TransportTiming? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.timing = timing
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Why no response arrived. The difference decides whether a write may have been applied.
public enum TransportFailure: Error, Sendable {
    /// Nothing was sent: no connection could be made (refused, no route, DNS, connect timeout).
    case unreachable(String)
    /// The request may have reached the server, but no complete response came back (reset, read timeout, a body
    /// cut short, a compressed body that is corrupt or inflates past the limit).
    case interrupted(String)
    /// As `interrupted`, for an answer whose body is over the size limit for one answer: asking for less (a smaller
    /// page) may get through where asking again the same way never will.
    case tooLarge(String)
    /// Nothing was sent: the TLS handshake failed — the server's certificate was refused (expired, unknown CA, another
    /// host's) or no TLS version both sides accept. The text says which, for the admin; retrying will not fix it.
    case tls(String)
}

/// How requests reach the API. `HTTPTransport` is the real one (AsyncHTTPClient); the simulator answers in process.
public protocol APITransport: Sendable {
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse
}
