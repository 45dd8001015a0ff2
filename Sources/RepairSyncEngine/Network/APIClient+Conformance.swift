public import Foundation

extension APIClient {
    /// Any request under the base URL, for a tool that probes the contract (`repair-api-conformance`): a path no
    /// endpoint method builds (an unknown collection), or a request without the token. It goes through the same
    /// transport, headers, Retry-After gate and error classification as the endpoint methods, so what it accepts is
    /// what the engine accepts.
    ///
    /// ```swift
    /// let reply = try await api.request("GET", "/api/v1/orders/changes?limit=1", authenticated: false)
    /// ```
    public func request(
        _ method: String, _ path: String, json: Data? = nil, headers: [(name: String, value: String)] = [],
        authenticated: Bool = true
    ) async throws(APIError) -> Reply {
        try await send(method, path, json: json, headers: headers, authenticated: authenticated)
    }
}
