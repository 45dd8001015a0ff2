public import AsyncHTTPClient
public import Foundation
public import RepairSyncModels
internal import Synchronization

/// The Repair Minder API (docs/api.md) over an `APITransport`: one method per endpoint the engine uses, errors
/// classified (`APIError`), the server clock tracked from `Date` headers, and a Retry-After gate that no request
/// passes before its time.
public final class APIClient: Sendable {
    public struct Configuration: Sendable {
        public var baseURL: String
        public var token: String
        public var requestTimeout: Duration
        public var maxResponseBytes: Int
        /// The longest wait a `Retry-After` can impose; a longer one is cut to this (a server clock set a day ahead
        /// must not silence the shop for a day).
        public var retryAfterCap: Duration

        public init(
            baseURL: String, token: String, requestTimeout: Duration = .seconds(30), maxResponseBytes: Int = 64 << 20,
            retryAfterCap: Duration = .seconds(3600)
        ) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.token = token
            self.requestTimeout = requestTimeout
            self.maxResponseBytes = maxResponseBytes
            self.retryAfterCap = retryAfterCap
        }
    }

    /// A response the engine decodes itself.
    public struct Reply: Sendable {
        public var status: Int
        public var body: Data
        /// `Idempotent-Replayed: true`: the server answered a retried key with its earlier outcome.
        public var replayed: Bool
        /// The body's size on the wire (compressed, for a compressed answer with a length); the body's size when the
        /// transport does not say.
        public var wireBytes: Int = 0
    }

    public let configuration: Configuration
    /// How requests travel (`HTTPTransport` in production): doctor reads its TLS settings.
    public let transport: any APITransport
    /// The link's round trip, throughput and verdict, from every answer this client receives (a process's clients can
    /// share one).
    public let link: LinkMeter
    private let clock: any EngineClock
    private let state = LockedState()

    /// Over AsyncHTTPClient (`HTTPTransport`) to `configuration.baseURL`.
    public convenience init(
        configuration: Configuration, clock: any EngineClock = SystemEngineClock(),
        http: HTTPClient = HTTPTransport.defaultHTTPClient, link: LinkMeter = LinkMeter()
    ) {
        self.init(
            configuration: configuration, clock: clock,
            transport: HTTPTransport(
                baseURL: configuration.baseURL, maxResponseBytes: configuration.maxResponseBytes, http: http),
            link: link)
    }

    public init(
        configuration: Configuration, clock: any EngineClock, transport: any APITransport, link: LinkMeter = LinkMeter()
    ) {
        self.configuration = configuration
        self.clock = clock
        self.transport = transport
        self.link = link
    }

    /// The process-wide HTTP client (see `HTTPTransport.defaultHTTPClient`).
    public static var defaultHTTPClient: HTTPClient { HTTPTransport.defaultHTTPClient }

    /// Responses received since start, by status class ("2xx", "4xx", "5xx", …), and requests that got none
    /// ("network"): for `repairctl stats` and the metrics.
    public var responseCounts: [String: Int] { state.responses }

    /// Local clock minus server clock in milliseconds, from the last `Date` header (0 until one is seen).
    public var clockOffsetMilliseconds: Int64 { state.clockOffset }

    /// How long the server still asks us to wait (Retry-After of a 429 or 503), if it does. Kept on the monotonic
    /// clock: a wall clock set back by an hour must not turn a one-second wait into an hour's silence.
    public var remainingWait: Duration? {
        guard let until = state.notBefore else { return nil }
        let remaining = until - clock.uptime()
        return remaining > .zero ? remaining : nil
    }

    /// Sends nothing for `wait` (capped at `retryAfterCap`): a `Retry-After` received outside this client (the
    /// change stream's) holds every request, as the contract asks.
    /// `status`: the answer that asked to wait (429 or 503), which the requests held meanwhile are refused with.
    public func holdRequests(for wait: Duration, status: Int = 429) {
        state.holdUntil(clock.uptime() + min(wait, configuration.retryAfterCap), status: status)
    }

    // MARK: Endpoints

    public func health() async throws(APIError) -> HealthStatus {
        let reply = try await send("GET", "/api/v1/health", authenticated: false)
        return try decode(HealthStatus.self, reply.body)
    }

    /// Calls health and sets the clock offset from the server's millisecond `time`, taken at the midpoint of the
    /// round trip. Until then (and as a coarse check afterwards) the `Date` header of every response is used.
    public func measureClockOffset() async throws(APIError) {
        let sent = clock.now()
        let reply = try await send("GET", "/api/v1/health", authenticated: false)
        let received = clock.now()
        let health = try decode(HealthStatus.self, reply.body)
        let midpoint = sent.millisecondsSince1970 + (received.millisecondsSince1970 - sent.millisecondsSince1970) / 2
        state.setPreciseOffset(midpoint - health.time.millisecondsSince1970)
    }

    public func changes(_ collection: SyncCollection, cursor: String?, limit: Int) async throws(APIError) -> Reply {
        var path = "/api/v1/\(collection.name)/changes?limit=\(limit)"
        if let cursor {
            path += "&cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)
        }
        return try await send("GET", path)
    }

    /// `GET /api/v1/{collection}/{id}`: the record as the server has it now.
    public func record(_ collection: SyncCollection, id: String) async throws(APIError) -> Reply {
        try await send("GET", "/api/v1/\(collection.name)/\(Self.escape(id))")
    }

    /// `GET /api/v1/{collection}/{id}`, decoded and checked (`decodeRecord`).
    func currentRecord<R: SyncRecord>(_ type: R.Type, id: String) async throws(APIError) -> R {
        try decodeRecord(R.self, try await record(R.collection, id: id).body, asked: id, by: "GET")
    }

    /// A record endpoint's answer (a GET, a PATCH's or a create's 2xx) must be the record asked for. A server that
    /// answers with another one (a miskeyed cache, an alias, a proxy mixing up replies) is not believed: `malformed`,
    /// transient. Taken, another record's copy would be laid over that record without its conflicts judged, settle
    /// a change with the wrong record, or count the one asked for as checked — a ghost no later run looks at. (It must
    /// also carry every key of its shape: the record types' decoding refuses one left out.)
    func decodeRecord<R: SyncRecord>(_ type: R.Type, _ body: Data, asked id: String, by request: String)
        throws(APIError) -> R
    {
        let record = try decode(R.self, body)
        guard record.id == id else {
            throw .malformed("\(R.collection) \(request) \(id) answered with record \(record.id)")
        }
        return record
    }

    public func patch(_ collection: SyncCollection, id: String, fields: FieldValues, ifMatch: Int?, key: String)
        async throws(APIError) -> Reply
    {
        var headers = [(name: "Idempotency-Key", value: key)]
        if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
        return try await send(
            "PATCH", "/api/v1/\(collection.name)/\(Self.escape(id))", json: Data(FieldValuesJSON.encode(fields).utf8),
            headers: headers)
    }

    public func postMessage(ticketId: String, body: Data, key: String) async throws(APIError) -> Reply {
        try await send(
            "POST", "/api/v1/tickets/\(Self.escape(ticketId))/messages", json: body, headers: [("Idempotency-Key", key)]
        )
    }

    public func dashboard(period: String) async throws(APIError) -> Reply {
        try await send("GET", "/api/v1/dashboard/stats?period=\(period)")
    }

    // MARK: Transport

    /// A record id as one path segment (`/` escaped too): how every request of the engine names a record, and how
    /// `repair-api-conformance` names one in the requests it builds itself.
    public static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? segment
    }

    /// `text` from a server (an error's message) with the token, should it be quoted there, replaced.
    func redactingToken(_ text: String) -> String {
        let token = configuration.token
        guard !token.isEmpty, text.contains(token) else { return text }
        return text.replacingOccurrences(of: token, with: "[token]")
    }

    /// A server's answer decoded, made storable first (`StorableJSON`: no NUL, no lone surrogate reaches a record).
    func decode<T: Decodable>(_ type: T.Type, _ body: Data) throws(APIError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: StorableJSON.repaired(body))
        } catch let error as DecodingError {
            throw .malformed("\(T.self): \(error.summary)")
        } catch {
            throw .malformed("\(T.self): \(error)")
        }
    }

    func send(
        _ method: String, _ path: String, json: Data? = nil, headers: [(name: String, value: String)] = [],
        authenticated: Bool = true
    ) async throws(APIError) -> Reply {
        if let wait = remainingWait {
            // Refused here with the status that asked to wait: a 503's hold told as a 429 made the status say
            // "rate limited: HTTP 429" through a maintenance window.
            let status = state.holdStatus
            throw .http(
                HTTPFailure(
                    status: status, code: status == 429 ? "rate_limited" : nil,
                    message: "waiting \(wait.inMilliseconds) ms more for the server's Retry-After",
                    retryAfter: wait))
        }
        var request = TransportRequest(
            method: method, path: path,
            headers: [
                ("Accept", "application/json"), ("User-Agent", ProductInfo.userAgent),
                // Every answer is the API's of this moment: a cache between (a proxy's) revalidates rather than hand
                // back an earlier page, copy or write's answer (Pragma for HTTP/1.0 caches).
                ("Cache-Control", "no-cache"), ("Pragma", "no-cache"),
            ])
        if authenticated { request.headers.append(("Authorization", "Bearer \(configuration.token)")) }
        request.headers += headers
        if let json {
            request.headers.append(("Content-Type", "application/json"))
            request.body = json
        }
        let response: TransportResponse
        do {
            response = try await transport.send(request, timeout: configuration.requestTimeout)
        } catch {
            state.count("network")
            switch error {
            case .unreachable(let detail): throw .unreachable(detail)
            case .interrupted(let detail): throw .interrupted(detail)
            case .tooLarge(let detail): throw .tooLarge(detail)
            case .tls(let reason): throw .tls(reason)
            }
        }
        let status = response.status
        state.count("\(status / 100)xx")
        if let timing = response.timing { link.record(timing) }
        let serverDate = response.header("Date").flatMap(HTTPDates.parse)
        if let serverDate {
            state.observe(dateOffset: clock.now().millisecondsSince1970 - Timestamp(serverDate).millisecondsSince1970)
        }
        let replayed = response.header("Idempotent-Replayed")?.lowercased() == "true"
        guard (200..<300).contains(status) else {
            let detail = try? JSONDecoder().decode(APIErrorBody.self, from: response.body).error
            // An HTTP date is measured against the same response's Date header: the server's clock, not ours.
            var retryAfter = response.header("Retry-After").flatMap {
                HTTPDates.retryAfter($0, now: serverDate ?? clock.now().date)
            }.map { min($0, configuration.retryAfterCap) }
            if status == 429 { retryAfter = retryAfter ?? .seconds(1) }
            if let retryAfter, status == 429 || status == 503 {
                state.holdUntil(clock.uptime() + retryAfter, status: status)
            }
            // Kept for the status, the log and the outbox: an error page that echoes the request's headers would
            // otherwise carry the token there — redacted before it is cut, so that no part of it is left at the cut.
            let message =
                detail.map { redactingToken($0.message) }
                ?? String(redactingToken(String(decoding: response.body, as: UTF8.self)).prefix(200))
            throw .http(
                HTTPFailure(
                    status: status, code: detail?.code, message: message, field: detail?.field.map(redactingToken),
                    retryAfter: retryAfter, body: response.body, replayed: replayed))
        }
        return Reply(
            status: status, body: response.body, replayed: replayed,
            wireBytes: response.timing?.wireBytes ?? response.body.count)
    }

    /// The mutable bits, behind a mutex: they are read and written from concurrent requests.
    private final class LockedState: Sendable {
        private struct Values {
            var clockOffset: Int64 = 0
            var precise = false
            /// On the engine clock's monotonic scale.
            var notBefore: Duration?
            /// The status of the answer that set `notBefore`.
            var holdStatus = 429
            var responses: [String: Int] = [:]
        }

        private let values = Mutex(Values())

        var clockOffset: Int64 { values.withLock { $0.clockOffset } }

        var responses: [String: Int] { values.withLock { $0.responses } }

        func count(_ kind: String) { values.withLock { $0.responses[kind, default: 0] += 1 } }

        /// Sets the offset measured from the health endpoint's millisecond time.
        func setPreciseOffset(_ offset: Int64) {
            values.withLock { ($0.clockOffset, $0.precise) = (offset, true) }
        }

        /// A `Date` header has whole seconds, and servers commonly refresh it once a second, so it can lag the
        /// server's clock by up to about two seconds: local-at-receipt minus the header lies within
        /// [offset, offset + ~2 s + latency]. It sets the offset until a precise one is measured, and afterwards only
        /// when it falls well outside that window (the clock was changed since the measurement).
        func observe(dateOffset: Int64) {
            values.withLock { values in
                if !values.precise {
                    values.clockOffset = dateOffset - 1000
                } else if dateOffset < values.clockOffset - 1000 || dateOffset > values.clockOffset + 5000 {
                    values.clockOffset = dateOffset - 1000
                    values.precise = false
                }
            }
        }

        /// No request before `until`; a later hold never shortens an earlier, longer one (whose status stays).
        func holdUntil(_ until: Duration, status: Int) {
            values.withLock { values in
                guard until > values.notBefore ?? .zero else { return }
                (values.notBefore, values.holdStatus) = (until, status)
            }
        }

        var notBefore: Duration? { values.withLock { $0.notBefore } }

        var holdStatus: Int { values.withLock { $0.holdStatus } }
    }
}
