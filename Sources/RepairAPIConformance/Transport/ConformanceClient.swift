internal import Foundation
internal import RepairSyncEngine
internal import Synchronization

/// The daemon's `APIClient` over a recording transport: every call returns the exchange it made, headers included,
/// and a 429 — or a 503 with a `Retry-After` the daemon understands — is waited out (its `Retry-After`, as the
/// daemon would) and retried, at most three times; a 503 without `Retry-After` ("not now", section 6) is tried
/// again after 1, 2 and 4 s. The waits of the whole run are bounded (`ConformanceOptions.maxWait`): a server that
/// refuses every request ends the run in minutes, its checks failed, not after hours of waiting.
final class ConformanceClient: Sendable {
    /// The client with the run's token.
    let api: APIClient
    /// The same server with a token it cannot know, for the 401 checks.
    let stranger: APIClient
    let recorder: RecordingTransport
    private let rateLimited = Mutex<[RateLimitObservation]>([])
    /// How long the run's waits may come to in all, and how long they came to so far.
    private let maxWait: Duration
    private let waited = Mutex<Duration>(.zero)

    /// A 429 or a 503 the run met, and whether the request went through after the wait.
    struct RateLimitObservation: Sendable {
        var exchange: Exchange
        var retrySucceeded: Bool
        /// Not waited out: the run had already waited `maxWait` in all.
        var outOfPatience = false
    }

    /// The longest `Retry-After` the run waits out; a longer one ends the call with the 429.
    static let longestWait: Duration = .seconds(120)

    init(options: ConformanceOptions, transport: (any APITransport)?) {
        maxWait = options.maxWait
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
        var outOfPatience = false
        var tooLong = false
        for attempt in 0..<4 {
            // A 503 without Retry-After leaves no hold: 1, 2, then 4 s.
            let unavailable = pending.map { $0.exchange.status == 503 && $0.exchange.header("Retry-After") == nil }
            if let wait = client.remainingWait ?? (unavailable == true ? .seconds(1 << (attempt - 1)) : nil) {
                guard wait <= Self.longestWait else {
                    tooLong = true
                    break
                }
                guard spend(wait) else {
                    outOfPatience = true
                    pending?.outOfPatience = true
                    break
                }
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
                if case .http(let http)? = failure, [429, 503].contains(http.status) { continue }
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
            if exchange.status == 429 || exchange.status == 503 {
                // One observation per call, of its first refusal: whether the call went through in the end.
                if pending == nil { pending = RateLimitObservation(exchange: exchange, retrySucceeded: false) }
                continue
            }
            if var pending {
                pending.retrySucceeded = true
                record(pending)
            }
            return (exchange, failure)
        }
        if let pending { record(pending) }
        let status = pending?.exchange.status ?? 429
        let why =
            if outOfPatience {
                "refused, and the run's waits had come to the --max-wait of \(maxWait.components.seconds) s"
            } else if tooLong {
                "refused with a Retry-After longer than the \(Self.longestWait.components.seconds) s the tool waits"
            } else {
                "still refused after three waits"
            }
        return (
            pending?.exchange
                ?? Exchange(method: "?", path: "?", status: nil, headers: [], body: Data(), failure: "not sent: \(why)"),
            .http(HTTPFailure(status: status, code: status == 429 ? "rate_limited" : "unavailable", message: why))
        )
    }

    /// Takes `wait` from what the run may still wait; false (and nothing taken) when it is more than that.
    private func spend(_ wait: Duration) -> Bool {
        waited.withLock { waited in
            guard waited + wait <= maxWait else { return false }
            waited += wait
            return true
        }
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
