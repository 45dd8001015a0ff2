public import AsyncHTTPClient
public import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
public import RepairSyncModels
internal import Synchronization

/// The Repair Minder API (docs/api.md) over AsyncHTTPClient: one method per endpoint the engine uses, errors
/// classified (`APIError`), the server clock tracked from `Date` headers, and a Retry-After gate that no request
/// passes before its time.
public final class APIClient: Sendable {
    public struct Configuration: Sendable {
        public var baseURL: String
        public var token: String
        public var requestTimeout: Duration
        public var maxResponseBytes: Int

        public init(baseURL: String, token: String, requestTimeout: Duration = .seconds(30), maxResponseBytes: Int = 64 << 20) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.token = token
            self.requestTimeout = requestTimeout
            self.maxResponseBytes = maxResponseBytes
        }
    }

    /// A response the engine decodes itself.
    public struct Reply: Sendable {
        public var status: Int
        public var body: Data
        public var replayed: Bool
    }

    public let configuration: Configuration
    private let http: HTTPClient
    private let clock: any EngineClock
    private let state = LockedState()

    /// The process-wide client for API requests. Unlike `HTTPClient.shared` it fails a request as soon as a connection
    /// cannot be made (the engine then goes offline and the probe takes over) instead of retrying the connect until
    /// the request times out, and it never follows a redirect (which could carry the token to another host).
    public static let defaultHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(5)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public init(
        configuration: Configuration, clock: any EngineClock = SystemEngineClock(),
        http: HTTPClient = APIClient.defaultHTTPClient
    ) {
        self.configuration = configuration
        self.clock = clock
        self.http = http
    }

    /// Responses received since start, by status class ("2xx", "4xx", "5xx", …), and requests that got none
    /// ("network"): for `repairctl stats` and the metrics.
    public var responseCounts: [String: Int] { state.responses }

    /// Local clock minus server clock in milliseconds, from the last `Date` header (0 until one is seen).
    public var clockOffsetMilliseconds: Int64 { state.clockOffset }

    /// How long the server still asks us to wait (429 Retry-After), if it does. Kept on the monotonic clock: a wall
    /// clock set back by an hour must not turn a one-second wait into an hour's silence.
    public var remainingWait: Duration? {
        guard let until = state.notBefore else { return nil }
        let remaining = ContinuousClock.now.duration(to: until)
        return remaining > .zero ? remaining : nil
    }

    // MARK: Endpoints

    public func health() async throws(APIError) -> HealthStatus {
        let reply = try await send(.GET, "/api/v1/health", authenticated: false)
        return try decode(HealthStatus.self, reply.body)
    }

    /// Calls health and sets the clock offset from the server's millisecond `time`, taken at the midpoint of the
    /// round trip. Until then (and as a coarse check afterwards) the `Date` header of every response is used.
    public func measureClockOffset() async throws(APIError) {
        let sent = clock.now()
        let reply = try await send(.GET, "/api/v1/health", authenticated: false)
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
        return try await send(.GET, path)
    }

    public func patch(_ collection: SyncCollection, id: String, fields: FieldValues, ifMatch: Int?, key: String)
        async throws(APIError) -> Reply
    {
        var headers = [("Idempotency-Key", key)]
        if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
        return try await send(
            .PATCH, "/api/v1/\(collection.name)/\(Self.escape(id))", json: Data(FieldValuesJSON.encode(fields).utf8),
            headers: headers)
    }

    public func postMessage(ticketId: String, body: Data, key: String) async throws(APIError) -> Reply {
        try await send(
            .POST, "/api/v1/tickets/\(Self.escape(ticketId))/messages", json: body, headers: [("Idempotency-Key", key)])
    }

    public func dashboard(period: String) async throws(APIError) -> Reply {
        try await send(.GET, "/api/v1/dashboard/stats?period=\(period)")
    }

    // MARK: Transport

    static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? segment
    }

    func decode<T: Decodable>(_ type: T.Type, _ body: Data) throws(APIError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw .malformed("\(T.self): \(error)")
        }
    }

    func send(
        _ method: HTTPMethod, _ path: String, json: Data? = nil, headers: [(String, String)] = [],
        authenticated: Bool = true
    ) async throws(APIError) -> Reply {
        if let wait = remainingWait {
            throw .http(
                status: 429, code: "rate_limited", message: "waiting \(wait.inMilliseconds) ms more for Retry-After",
                field: nil, retryAfter: wait, body: Data())
        }
        var request = HTTPClientRequest(url: configuration.baseURL + path)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: ProductInfo.userAgent)
        if authenticated { request.headers.add(name: "Authorization", value: "Bearer \(configuration.token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: json))
        }
        let status: Int
        let body: Data
        let responseHeaders: HTTPHeaders
        do {
            let response = try await http.execute(request, timeout: .init(configuration.requestTimeout))
            status = Int(response.status.code)
            responseHeaders = response.headers
            let buffer = try await response.body.collect(upTo: configuration.maxResponseBytes)
            body = Data(buffer.readableBytesView)
        } catch {
            state.count("network")
            throw Self.classify(error)
        }
        state.count("\(status / 100)xx")
        if let date = responseHeaders.first(name: "Date").flatMap(HTTPDates.parse) {
            state.observe(dateOffset: clock.now().millisecondsSince1970 - Timestamp(date).millisecondsSince1970)
        }
        guard (200..<300).contains(status) else {
            let detail = try? JSONDecoder().decode(APIErrorBody.self, from: body).error
            var retryAfter = responseHeaders.first(name: "Retry-After").flatMap {
                HTTPDates.retryAfter($0, now: clock.now().date)
            }
            if status == 429 {
                retryAfter = retryAfter ?? .seconds(1)
                state.notBefore = ContinuousClock.now + (retryAfter ?? .seconds(1))
            }
            throw .http(
                status: status, code: detail?.code, message: detail?.message ?? String(decoding: body.prefix(200), as: UTF8.self),
                field: detail?.field, retryAfter: retryAfter, body: body)
        }
        return Reply(status: status, body: body, replayed: responseHeaders.first(name: "Idempotent-Replayed") == "true")
    }

    /// Connect-level failures mean offline; anything after the request may have been sent means interrupted.
    static func classify(_ error: any Error) -> APIError {
        let text = String(describing: error)
        if error is NIOConnectionError { return .unreachable(text) }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .connectTimeout, .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout:
                return .unreachable(text)
            default:
                return .interrupted(text)
            }
        }
        if let ioError = error as? IOError,
            [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ENOENT].contains(ioError.errnoCode)
        {
            return .unreachable(text)
        }
        if text.contains("connectionRefused") || text.contains("Connection refused") { return .unreachable(text) }
        return .interrupted(text)
    }

    /// The mutable bits, behind a mutex: they are read and written from concurrent requests.
    private final class LockedState: Sendable {
        private struct Values {
            var clockOffset: Int64 = 0
            var precise = false
            var notBefore: ContinuousClock.Instant?
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

        var notBefore: ContinuousClock.Instant? {
            get { values.withLock { $0.notBefore } }
            set { values.withLock { $0.notBefore = newValue } }
        }
    }
}
