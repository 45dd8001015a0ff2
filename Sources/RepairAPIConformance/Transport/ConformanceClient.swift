internal import Foundation
internal import RepairSyncEngine
internal import Synchronization

/// The daemon's `APIClient` over a recording transport: every call returns the exchange it made, headers included,
/// and a 429 — or a 503 with a `Retry-After` the daemon understands — is waited out (its `Retry-After`, as the
/// daemon would) and retried, at most three times.
final class ConformanceClient: Sendable {
    /// The client with the run's token.
    let api: APIClient
    /// The same server with a token it cannot know, for the 401 checks.
    let stranger: APIClient
    let recorder: RecordingTransport
    private let rateLimited = Mutex<[RateLimitObservation]>([])

    /// A 429 (or a 503 with `Retry-After`) the run met, and whether the request went through after the wait.
    struct RateLimitObservation: Sendable {
        var exchange: Exchange
        var retrySucceeded: Bool
    }

    /// The longest `Retry-After` the run waits out; a longer one ends the call with the 429.
    static let longestWait: Duration = .seconds(120)

    init(options: ConformanceOptions, transport: (any APITransport)?) {
        let inner = transport ?? HTTPTransport(baseURL: options.baseURL)
        recorder = RecordingTransport(inner)
        api = APIClient(
            configuration: .init(
                baseURL: options.baseURL, token: options.token, requestTimeout: options.requestTimeout,
                retryAfterCap: Self.longestWait),
            clock: SystemEngineClock(), transport: recorder)
        stranger = APIClient(
            configuration: .init(
                baseURL: options.baseURL, token: "repair-api-conformance-unknown-token-\(UUID().uuidString)",
                requestTimeout: options.requestTimeout, retryAfterCap: Self.longestWait),
            clock: SystemEngineClock(), transport: recorder)
    }

    var rateLimits: [RateLimitObservation] { rateLimited.withLock { $0 } }

    /// Makes one call through `client` (the run's own unless told otherwise) and returns the exchange it made and the
    /// error the engine classified, if any.
    func call(
        with client: APIClient? = nil, _ body: (APIClient) async throws(APIError) -> Void
    ) async -> (exchange: Exchange, error: APIError?) {
        let client = client ?? api
        var pending: RateLimitObservation?
        for _ in 0..<4 {
            if let wait = client.remainingWait {
                guard wait <= Self.longestWait else { break }
                try? await Task.sleep(for: wait)
            }
            let mark = recorder.count
            var failure: APIError?
            do {
                try await body(client)
            } catch {
                failure = error
            }
            guard let exchange = recorder.exchanges(since: mark).last else {
                // The engine's Retry-After gate refused to send: wait and try again.
                if case .http(let http)? = failure, http.status == 429 { continue }
                return (
                    Exchange(
                        method: "?", path: "?", status: nil, headers: [], body: Data(),
                        failure: failure.map { "\($0)" } ?? "no request was sent"),
                    failure
                )
            }
            if exchange.status == 503, exchange.header("Retry-After") != nil, Self.understoodRetryAfter(exchange) == nil
            {
                // A wait the daemon cannot read is judged (unavailable), not waited out.
                if let pending { record(pending) }
                record(RateLimitObservation(exchange: exchange, retrySucceeded: false))
                return (exchange, failure)
            }
            if exchange.status == 429 || (exchange.status == 503 && exchange.header("Retry-After") != nil) {
                if let pending { record(pending) }
                pending = RateLimitObservation(exchange: exchange, retrySucceeded: false)
                continue
            }
            if var pending {
                pending.retrySucceeded = true
                record(pending)
            }
            return (exchange, failure)
        }
        if let pending { record(pending) }
        let last = recorder.all.last
        return (
            last
                ?? Exchange(method: "?", path: "?", status: nil, headers: [], body: Data(), failure: "rate limited"),
            .http(HTTPFailure(status: 429, code: "rate_limited", message: "still rate limited after three waits"))
        )
    }

    /// How long the exchange's `Retry-After` asks to wait, read as the daemon reads it (`HTTPDates.retryAfter`, an
    /// HTTP date measured against the same answer's `Date`); nil when there is none or the daemon cannot read it.
    static func understoodRetryAfter(_ exchange: Exchange) -> Duration? {
        guard let value = exchange.header("Retry-After") else { return nil }
        let serverNow = exchange.header("Date").flatMap(HTTPDates.parse) ?? Date()
        return HTTPDates.retryAfter(value, now: serverNow)
    }

    private func record(_ observation: RateLimitObservation) {
        rateLimited.withLock { $0.append(observation) }
    }
}
