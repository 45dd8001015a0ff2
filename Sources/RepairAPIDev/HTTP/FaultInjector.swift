internal import Foundation
internal import RepairSyncModels
internal import Synchronization

/// The kinds of failure the development backend can inject.
enum FaultKind: String, Codable, CaseIterable, Sendable {
    /// Answer 500 / 503 without processing the request.
    case internalError = "500"
    case unavailable = "503"
    /// Answer 429 with `Retry-After` without processing the request.
    case rateLimited = "429"
    /// Answer 401 without processing the request.
    case unauthorized = "401"
    /// Wait `slow_ms`, then process normally (to trigger client timeouts).
    case slow
    /// Process the request (a write is applied), then send the headers and half the body and drop the connection.
    case cut
    /// Process the request, then send a complete 200 response whose JSON body stops halfway.
    case truncated
    /// Answer `422 invalid_value` (the API's JSON) without processing the request: a change the server refuses. On a
    /// write the refusal is remembered under its `Idempotency-Key`, as every 422 is (docs/api.md section 5).
    case invalidValue = "422"
    /// A PATCH answered `412 version_mismatch` with the record as stored (its version unchanged) as `current`,
    /// without applying it: a server that keeps refusing a version.
    case versionMismatch = "412"
    /// A PATCH answered `200` with the record as stored (its version unchanged, no `Idempotent-Replayed`), without
    /// applying it: a proxy's cache handing back an earlier answer.
    case cachedAnswer = "cached_answer"
    /// Answer 503 with `Retry-After` without processing the request.
    case unavailableRetryAfter = "503_retry_after"
    /// An HTML error page with status 401, 403 or 404, as a proxy, a captive portal or a deploy would send: not the
    /// API's JSON. Without processing the request.
    case html401 = "html_401"
    case html403 = "html_403"
    case html404 = "html_404"
    /// A changes page with `has_more: true` and the cursor that was asked for (the page's records as usual): a feed
    /// that does not advance.
    case stuckFeed = "stuck_feed"
    /// A changes page with `has_more: true`, no entries, and a cursor that is new each time but never advances.
    case emptyFeed = "empty_feed"
    /// The page asked for, with `has_more: true` and a cursor that is new each time (a nonce) but names the same
    /// position: the same records again and again under new cursor texts.
    case rotatingFeed = "rotating_feed"
    /// The first changes page this server ever served for the collection, as a stale cache would: older copies of
    /// records the client may have seen newer since.
    case stalePage = "stale_page"
    /// A changes page whose first record has a `version` that is not a number: valid JSON that does not decode.
    case malformedRecord = "malformed_record"
    /// Process the request, then answer 200 with `Content-Encoding: gzip` and a gzip bomb (a quarter of a MiB that
    /// inflates to 256 MiB of JSON whitespace before an empty page), whatever the client accepts.
    case gzipBomb = "gzip_bomb"
    /// Process the request, then answer 200 with `Content-Encoding: gzip` and a body that is not valid gzip.
    case corruptGzip = "corrupt_gzip"
}

/// Decides which requests fail, reproducibly: one-shot faults queued for matching requests first, then random
/// faults at a configured rate drawn from a seeded generator. Also tracks, per token, until when a client was told
/// to wait by a 429, to count requests that came back too early.
final class FaultInjector: Sendable {
    struct Plan: Codable, Sendable {
        var rate: Double
        var kinds: [String: Double]
        var seed: UInt64?
        var retryAfter: Int?
        var slowMs: Int?
        var includeHealth: Bool?
        /// How long after a 429 a request still counts as already in flight rather than a violation (default 100).
        var inFlightGraceMs: Int?
        /// `Retry-After` as an HTTP date (on the server's clock, see `clockSkewMs`) instead of seconds.
        var retryAfterDate: Bool?
        /// The server's clock runs this far ahead (negative: behind) of the machine's: in `Date` headers, the health
        /// time and `Retry-After` dates.
        var clockSkewMs: Int?

        enum CodingKeys: String, CodingKey {
            case rate, kinds, seed
            case retryAfter = "retry_after"
            case slowMs = "slow_ms"
            case includeHealth = "include_health"
            case inFlightGraceMs = "in_flight_grace_ms"
            case retryAfterDate = "retry_after_date"
            case clockSkewMs = "clock_skew_ms"
        }
    }

    struct OneShot: Codable, Sendable {
        var kind: FaultKind
        var method: String?
        var pathPrefix: String?
        var count: Int?

        enum CodingKeys: String, CodingKey {
            case kind, method, count
            case pathPrefix = "path_prefix"
        }
    }

    private struct State {
        var plan: Plan?
        var weighted: [(FaultKind, Double)] = []
        var rng = SplitMix64(seed: 1)
        var oneShots: [OneShot] = []
        /// Per token: when the last 429 was sent, and until when the client must wait.
        var waits: [String: (sent: ContinuousClock.Instant, until: ContinuousClock.Instant)] = [:]
    }

    private let state = Mutex(State())

    /// A request sent before the client could have read the 429 is in flight, not a violation.
    static let defaultInFlightGrace = Duration.milliseconds(100)

    func configure(_ plan: Plan?) throws {
        var weighted: [(FaultKind, Double)] = []
        if let plan {
            guard (0...1).contains(plan.rate) else { throw FaultPlanError(message: "rate must be within 0...1") }
            for (name, weight) in plan.kinds.sorted(by: { $0.key < $1.key }) {
                guard let kind = FaultKind(rawValue: name) else {
                    throw FaultPlanError(
                        message: "unknown fault kind \(name); known: \(FaultKind.allCases.map(\.rawValue))")
                }
                if weight > 0 { weighted.append((kind, weight)) }
            }
            guard plan.rate == 0 || !weighted.isEmpty else {
                throw FaultPlanError(message: "kinds must give at least one kind a positive weight")
            }
        }
        state.withLock {
            $0.plan = plan
            $0.weighted = weighted
            $0.rng = SplitMix64(seed: plan?.seed ?? 1)
        }
    }

    func queue(_ oneShot: OneShot) {
        state.withLock { $0.oneShots.append(oneShot) }
    }

    var plan: Plan? { state.withLock { $0.plan } }

    /// The fault to inject into this request, if any.
    func draw(method: String, path: String, isHealth: Bool) -> FaultKind? {
        state.withLock { state in
            if let index = state.oneShots.firstIndex(where: { shot in
                (shot.method.map { $0.uppercased() == method } ?? true)
                    && (shot.pathPrefix.map { path.hasPrefix($0) } ?? true)
            }) {
                let kind = state.oneShots[index].kind
                let remaining = (state.oneShots[index].count ?? 1) - 1
                if remaining <= 0 {
                    state.oneShots.remove(at: index)
                } else {
                    state.oneShots[index].count = remaining
                }
                return kind
            }
            guard let plan = state.plan, plan.rate > 0, !isHealth || plan.includeHealth == true else { return nil }
            guard state.rng.unit() < plan.rate else { return nil }
            let total = state.weighted.reduce(0) { $0 + $1.1 }
            var point = state.rng.unit() * total
            for (kind, weight) in state.weighted {
                point -= weight
                if point < 0 { return kind }
            }
            return state.weighted.last?.0
        }
    }

    var retryAfterSeconds: Int { state.withLock { $0.plan?.retryAfter ?? 1 } }
    var clockSkewMilliseconds: Int { state.withLock { $0.plan?.clockSkewMs ?? 0 } }
    var retryAfterAsDate: Bool { state.withLock { $0.plan?.retryAfterDate ?? false } }
    /// The server's clock: the machine's, moved by the plan's `clock_skew_ms`.
    var serverNow: Date {
        Date().addingTimeInterval(Double(state.withLock { $0.plan?.clockSkewMs ?? 0 }) / 1000)
    }
    var slowDuration: Duration { .milliseconds(state.withLock { $0.plan?.slowMs ?? 3000 }) }

    func rateLimited(token: String, seconds: Int) {
        let now = ContinuousClock.now
        state.withLock { $0.waits[token] = (now, now + .seconds(seconds)) }
    }

    /// True when this token was told to wait and its request arrived before the time was up (and after the
    /// in-flight grace).
    func isEarly(token: String) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard let wait = state.waits[token] else { return false }
            let grace = state.plan?.inFlightGraceMs.map { Duration.milliseconds($0) } ?? Self.defaultInFlightGrace
            return now >= wait.sent + grace && now < wait.until
        }
    }
}

struct FaultPlanError: Error {
    var message: String
}
