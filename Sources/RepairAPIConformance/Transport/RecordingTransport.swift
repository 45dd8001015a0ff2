public import Foundation
public import RepairSyncEngine
internal import RepairSyncProtocol
internal import Synchronization

/// One request the run sent and what came back, headers included (the engine's `APIClient` hands back only the
/// status and body; checks such as `Date` on every answer need the rest).
public struct Exchange: Sendable {
    public var method: String
    /// Path and query under the base URL.
    public var path: String
    /// Nil when no response arrived (`failure` says why).
    public var status: Int?
    public var headers: [(name: String, value: String)]
    public var body: Data
    public var failure: String?

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// `GET /api/v1/orders/changes?limit=100`, for reasons.
    public var requestLine: String { "\(method) \(path)" }

    /// The same exchange with what was sent named after its path (`PATCH /api/v1/orders/ord_1 (a JSON array)`), for
    /// reasons about a request whose request line alone does not show its header or body.
    public func labelled(_ what: String) -> Exchange {
        var labelled = self
        labelled.path += " (\(what))"
        return labelled
    }

    /// `answered 412`, or why nothing was answered.
    public var answer: String {
        if let status { return "answered \(status)" + (errorCode.map { " \($0)" } ?? "") }
        return "got no answer (\(failure ?? "no response"))"
    }

    /// `error.code` of an error body, when it is the contract's JSON error.
    public var errorCode: String? {
        guard let status, status >= 400, let value = try? JSONText.parse(body) else { return nil }
        return value["error"]?["code"]?.stringValue
    }
}

/// An `APITransport` that passes every request to another one and keeps a copy of each exchange, in order.
///
/// The run sends one request at a time, so the exchanges a call made are those recorded after the mark taken before
/// it (`count`, then `exchanges(since:)`).
public final class RecordingTransport: APITransport {
    private let inner: any APITransport
    private let log = Mutex<[Exchange]>([])

    public init(_ inner: any APITransport) {
        self.inner = inner
    }

    public func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse
    {
        do {
            let response = try await inner.send(request, timeout: timeout)
            log.withLock {
                $0.append(
                    Exchange(
                        method: request.method, path: request.path, status: response.status,
                        headers: response.headers, body: response.body, failure: nil))
            }
            return response
        } catch {
            let detail: String =
                switch error {
                case .unreachable(let text): "unreachable: \(text)"
                case .interrupted(let text): "interrupted: \(text)"
                case .tooLarge(let text): "too large: \(text)"
                case .tls(let text): "TLS refused: \(text)"
                }
            log.withLock {
                $0.append(
                    Exchange(
                        method: request.method, path: request.path, status: nil, headers: [], body: Data(),
                        failure: detail))
            }
            throw error
        }
    }

    public var count: Int { log.withLock { $0.count } }

    public func exchanges(since mark: Int) -> [Exchange] { log.withLock { Array($0[min(mark, $0.count)...]) } }

    /// Every exchange so far.
    public var all: [Exchange] { log.withLock { $0 } }
}
