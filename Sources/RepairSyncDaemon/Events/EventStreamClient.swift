public import AsyncHTTPClient
public import Foundation
public import Logging
internal import NIOCore
internal import NIOHTTP1
public import RepairSyncEngine
public import RepairSyncModels
internal import Synchronization

/// Keeps the server's change stream (`GET /api/v1/events`, docs/api.md section 4.8) open while the API is reachable,
/// and tells the scheduler which collections changed — the daemon's answer to a "silent push".
///
/// - One stream at a time, through the daemon's own HTTP client (its CA file, TLS version and proxy) with the token.
/// - A change event names a collection: `notify(.changed)`. A `reset`, or a stream opened without a `Last-Event-ID`
///   (anything may have changed before it): `notify(.everything)`. The scheduler debounces and runs; this type never
///   pulls.
/// - Reconnects after a drop with `Last-Event-ID`, after a jittered exponential wait (`EventStreamBackoff`).
/// - No byte for `silenceFactor` heartbeat intervals (the server announces its interval in `ready`; 15 s until then)
///   is a dead stream: cut and reconnect.
/// - 404 (also 405, 501): the server has no stream. State `unavailable`; the periodic schedule carries on alone, and
///   the stream is tried again after `recheckUnavailable` — or after `recheckUnsure` when the answer is not the API's
///   JSON error (a proxy's or a portal's page, a deploy's: it may be gone in a minute, or it may be the server's own
///   404 page for a route it does not have).
/// - Bounded: lines, events (`ServerSentEventParser`) and what is handed on (the scheduler keeps a set of collections).
public final class EventStreamClient: Sendable {
    public enum State: String, Sendable {
        /// `sync.events: false`.
        case off
        /// Opening, or waiting to reopen (after a drop, a refusal, or while the API is unreachable).
        case connecting
        case connected
        /// The server has no change stream (404): the periodic schedule only.
        case unavailable
    }

    /// What the scheduler is told.
    public enum Notice: Sendable, Equatable {
        case changed(SyncCollection)
        /// Changes may have been missed: pull every collection.
        case everything
    }

    public struct Settings: Sendable {
        public var path: String
        public var backoff: EventStreamBackoff
        /// After a 404 in the API's JSON error shape, how long until the stream is tried again.
        public var recheckUnavailable: Duration
        /// After a 404 (405, 501) that is not the API's JSON error, how long until the stream is tried again.
        public var recheckUnsure: Duration
        /// Until the server's `ready` says otherwise.
        public var defaultHeartbeat: Duration
        /// Silence longer than this many heartbeat intervals is a dead stream.
        public var silenceFactor: Double
        public var maxLineBytes: Int
        public var maxEventBytes: Int
        /// What a stream may send, sustained, with bursts of sixteen seconds' worth (1 MiB at the default: a resumed
        /// stream's catch-up of some 16,000 changes at once): a stream of a few short events a second needs a fraction
        /// of it. More is a flood — cut, and counted as a failure on the backoff (a catch-up cut so resumes from the
        /// last event read).
        public var maxBytesPerSecond: Int

        public init(
            path: String = "/api/v1/events", backoff: EventStreamBackoff = EventStreamBackoff(),
            recheckUnavailable: Duration = .seconds(1800), recheckUnsure: Duration = .seconds(300),
            defaultHeartbeat: Duration = .seconds(15), silenceFactor: Double = 3, maxLineBytes: Int = 4096,
            maxEventBytes: Int = 16384, maxBytesPerSecond: Int = 64 << 10
        ) {
            self.path = path
            self.backoff = backoff
            self.recheckUnavailable = recheckUnavailable
            self.recheckUnsure = min(recheckUnsure, recheckUnavailable)
            self.defaultHeartbeat = defaultHeartbeat
            self.silenceFactor = silenceFactor
            self.maxLineBytes = maxLineBytes
            self.maxEventBytes = maxEventBytes
            self.maxBytesPerSecond = maxBytesPerSecond
        }
    }

    /// What `status` shows, and what the tests read.
    public struct Snapshot: Sendable {
        public var state: State
        public var since: Date
        /// The id of the last event received (sent as `Last-Event-ID` on the next connection).
        public var lastEventID: String?
        /// Connection attempts since start, and when the latest ones began (at most 32, oldest first).
        public var attempts: Int
        public var recentAttempts: [ContinuousClock.Instant]
        public var connections: Int
        public var changeEvents: Int
        public var resets: Int
        /// Streams cut for silence.
        public var silences: Int
    }

    let settings: Settings
    let http: HTTPClient
    let baseURL: String
    let token: String
    let logger: Logger
    let notify: @Sendable (Notice) async -> Void
    /// The engine's API client: its Retry-After gate holds the stream too, and a 429's Retry-After the stream receives
    /// holds the engine (no request at all to any endpoint before that time, docs/api.md section 6).
    let gate: APIClient?
    private let mailbox = Mailbox<Bool>()
    private let state: Mutex<Snapshot>
    private let online = Mutex(true)
    /// When a reset was last logged.
    private let resetLogged = Mutex<ContinuousClock.Instant?>(nil)
    private let observers = Mutex<[UUID: AsyncStream<State>.Continuation]>([:])

    public init(
        settings: Settings = Settings(), http: HTTPClient, baseURL: String, token: String, gate: APIClient? = nil,
        logger: Logger, notify: @escaping @Sendable (Notice) async -> Void
    ) {
        self.gate = gate
        self.settings = settings
        self.http = http
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.logger = logger
        self.notify = notify
        state = Mutex(
            Snapshot(
                state: .connecting, since: Date(), lastEventID: nil, attempts: 0, recentAttempts: [], connections: 0,
                changeEvents: 0, resets: 0, silences: 0))
    }

    public var snapshot: Snapshot { state.withLock { $0 } }

    /// Every change of `state` from now on (for `subscribe`: a status bar learns of a drop at once, not at the next
    /// run). Rare by construction: at most one per connection attempt.
    public func stateUpdates() -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(4))
        let id = UUID()
        observers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.observers.withLock { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    /// The probe's verdict: no stream is attempted while the API is unreachable; back online, one is opened at once.
    public func connectivityChanged(online isOnline: Bool) async {
        let changed = online.withLock { value -> Bool in
            defer { value = isOnline }
            return value != isOnline
        }
        if changed { await mailbox.post(isOnline) }
    }

    // MARK: Running

    public func run() async {
        var failures = 0
        while !Task.isCancelled {
            if !online.withLock({ $0 }) {
                if snapshot.state != .unavailable { set(.connecting) }
                _ = await mailbox.next(until: nil)
                continue
            }
            // A server that said Retry-After gets no request, the stream's included, before that time.
            if let wait = gate?.remainingWait {
                try? await Task.sleep(for: wait)
                continue
            }
            // Every stream opened without Last-Event-ID is a fresh one (docs/api.md): not only the first — after a
            // refused attempt, a 404's recheck, or a server that sends no ids, nothing says what changed meanwhile.
            let outcome = await connectOnce()
            guard !Task.isCancelled else { return }
            var wait: Duration
            switch outcome {
            case .unavailable(let status, let theAPIs):
                failures = 0
                wait = theAPIs ? settings.recheckUnavailable : settings.recheckUnsure
                logger.notice(
                    theAPIs
                        ? "the API has no change stream (\(status)): periodic sync only; trying again later"
                        : "the change stream was answered \(status) with a page that is not the API's (a proxy's?): periodic sync only; trying again soon",
                    metadata: ["recheck_in": "\(wait)"])
                set(.unavailable)
            case .ended(let healthy, let reason):
                failures = healthy ? 1 : failures + 1
                wait = settings.backoff.delay(failures: failures, random: Double.random(in: 0...1))
                if snapshot.state != .unavailable { set(.connecting) }
                logger.info(
                    "change stream ended; reconnecting",
                    metadata: [
                        "reason": "\(reason)",
                        "in_ms":
                            "\(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)",
                    ])
            case .refused(let retryAfter, let reason):
                failures += 1
                wait = settings.backoff.delay(failures: failures, random: Double.random(in: 0...1))
                if let retryAfter { wait = max(wait, min(retryAfter, settings.backoff.cap * 10)) }
                if snapshot.state != .unavailable { set(.connecting) }
                if reason == "HTTP 401" || reason == "HTTP 403", failures == 1 {
                    // What an admin must act on is said once per series, not at every retry (the runs report it too).
                    logger.warning(
                        "change stream refused: the server does not accept the token (api.token_file); trying again on the backoff",
                        metadata: ["reason": "\(reason)"])
                } else {
                    logger.info("change stream refused; trying again", metadata: ["reason": "\(reason)"])
                }
            }
            // Waits out the delay; going offline meanwhile stops the wait (the loop then waits to be online),
            // coming back online ends it at once.
            let deadline = ContinuousClock.now.advanced(by: wait)
            while !Task.isCancelled, ContinuousClock.now < deadline {
                guard let isOnline = await mailbox.next(until: deadline) else { break }
                if isOnline { break }
                if !online.withLock({ $0 }) { break }
            }
        }
    }

    enum Outcome: Sendable {
        /// 404, 405 or 501; `theAPIs`: in the API's JSON error shape, the server's own word.
        case unavailable(status: Int, theAPIs: Bool)
        /// The stream was open and ended (`healthy`: it had been up for `healthyAfter`).
        case ended(healthy: Bool, reason: String)
        /// No stream: an error status, a failed connection, or not an event stream.
        case refused(retryAfter: Duration?, reason: String)
    }

    private struct Dead: Error, CustomStringConvertible {
        var description: String
    }

    /// A 200 that is not an event stream (a captive portal's page, a proxy's, JSON): refused, not a silence.
    private struct NotAStream: Error, CustomStringConvertible {
        var description: String
    }

    /// A stream sending more than `Settings.maxBytesPerSecond`: cut, and never counted as a healthy one.
    private struct Flood: Error, CustomStringConvertible {
        var description: String
    }

    /// The bytes a stream may still send: a bucket of sixteen seconds' worth, refilled at the sustained rate.
    struct FloodBudget {
        let rate: Int
        private var available: Double
        private var last: ContinuousClock.Instant

        init(rate: Int, now: ContinuousClock.Instant = .now) {
            self.rate = rate
            available = Double(rate) * 16
            last = now
        }

        /// Takes `bytes` from the budget; false when they are more than what is left.
        mutating func spend(_ bytes: Int, now: ContinuousClock.Instant = .now) -> Bool {
            let elapsed = last.duration(to: now)
            last = now
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            available = min(Double(rate) * 16, available + seconds * Double(rate)) - Double(bytes)
            return available >= 0
        }
    }

    /// One connection: open it, read events until it ends, fails or falls silent.
    func connectOnce() async -> Outcome {
        var request = HTTPClientRequest(url: baseURL + settings.path)
        request.method = .GET
        request.headers.add(name: "Accept", value: "text/event-stream")
        request.headers.add(name: "Cache-Control", value: "no-store")
        request.headers.add(name: "User-Agent", value: ProductInfo.userAgent)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let lastID = snapshot.lastEventID
        if let lastID { request.headers.add(name: "Last-Event-ID", value: lastID) }
        state.withLock { snapshot in
            snapshot.attempts += 1
            snapshot.recentAttempts.append(.now)
            if snapshot.recentAttempts.count > 32 { snapshot.recentAttempts.removeFirst() }
        }
        let outgoing = request
        let watched = WatchBox(
            Watch(lastByte: .now, window: settings.defaultHeartbeat * settings.silenceFactor, opened: nil, status: nil))
        let result: Result<Void, any Error> = await withTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask {
                do {
                    try await self.stream(outgoing, fresh: lastID == nil, watched: watched)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                // The watchdog: no byte (not even a heartbeat) within the window is a dead stream. It wakes once per
                // window (not per byte): at the deadline it looks again at when the last byte came. `ready` shortens
                // the window, and says so through the mailbox.
                while !Task.isCancelled {
                    let (last, window) = watched.withLock { ($0.lastByte, $0.window) }
                    let due = last.advanced(by: window)
                    if due <= .now { return .failure(Dead(description: "silent for \(window)")) }
                    _ = await watched.windowChanged.next(until: due)
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .success(())
        }
        let seen = watched.withLock { $0 }
        if case .failure(let error) = result, error is Dead {
            state.withLock { $0.silences += 1 }
            logger.notice("change stream silent past its heartbeats: reconnecting", metadata: ["error": "\(error)"])
        }
        guard let opened = seen.opened else {
            if let status = seen.status {
                if [404, 405, 501].contains(status) {
                    let code = seen.errorBody.flatMap {
                        try? JSONDecoder().decode(APIErrorBody.self, from: $0).error.code
                    }
                    return .unavailable(status: status, theAPIs: HTTPFailure.isAPIAnswer(status: status, code: code))
                }
                if case .failure(let error) = result, error is NotAStream {
                    return .refused(retryAfter: seen.retryAfter, reason: "\(error)")
                }
                return .refused(retryAfter: seen.retryAfter, reason: "HTTP \(status)")
            }
            switch result {
            case .failure(let error): return .refused(retryAfter: nil, reason: "\(error)")
            case .success: return .refused(retryAfter: nil, reason: "no stream")
            }
        }
        if case .failure(let error) = result, error is Flood {
            logger.warning(
                "change stream cut: it sent more than a stream of changes can; reconnecting on the backoff",
                metadata: ["error": "\(error)"])
            return .ended(healthy: false, reason: "\(error)")
        }
        let healthy = opened.duration(to: .now) >= settings.backoff.healthyAfter
        switch result {
        case .failure(let error): return .ended(healthy: healthy, reason: "\(error)")
        case .success: return .ended(healthy: healthy, reason: "the server closed the stream")
        }
    }

    /// One connection's liveness, shared by its reader and its watchdog.
    final class WatchBox: Sendable {
        private let value: Mutex<Watch>
        let windowChanged = Mailbox<Void>()
        init(_ watch: Watch) { value = Mutex(watch) }
        func withLock<T: Sendable>(_ body: (inout Watch) -> T) -> T { value.withLock { body(&$0) } }
    }

    struct Watch: Sendable {
        var lastByte: ContinuousClock.Instant
        var window: Duration
        /// When a 200 event stream was opened.
        var opened: ContinuousClock.Instant?
        /// The status of a response that was not an event stream.
        var status: Int?
        var retryAfter: Duration?
        /// The first 16 KiB of that response's body.
        var errorBody: Data?
    }

    private func stream(_ request: HTTPClientRequest, fresh: Bool, watched: WatchBox) async throws {
        let response = try await http.execute(request, deadline: .distantFuture)
        watched.withLock { $0.lastByte = .now }
        let contentType = response.headers.first(name: "Content-Type")?.lowercased() ?? ""
        guard response.status == .ok, contentType.hasPrefix("text/event-stream") else {
            // Seconds or an HTTP date, the date measured against the answer's own Date header, as the engine does.
            let serverDate = response.headers.first(name: "Date").flatMap(HTTPDates.parse)
            let retryAfter = response.headers.first(name: "Retry-After").flatMap {
                HTTPDates.retryAfter($0, now: serverDate ?? Date())
            }
            // At once, before anything else: the engine's requests must stop now, not after this answer is read. Only
            // for a 429 (docs/api.md section 6: no request at all to any endpoint): a 503 here is about the stream
            // alone — a server may cap its open streams (4.8) — and holding every request for it stopped all sync
            // while the cap lasted (the stream asked again the instant each hold ended, and was refused again).
            if let retryAfter, response.status.code == 429 {
                gate?.holdRequests(for: retryAfter, status: 429)
            }
            watched.withLock {
                $0.status = Int(response.status.code)
                $0.retryAfter = retryAfter
            }
            if response.status == .ok {
                // Not read: it may never end (the connection is closed with the request).
                throw NotAStream(description: "HTTP 200 with Content-Type \(contentType), not text/event-stream")
            }
            // Read a little of the answer (for the connection's sake, and to tell the API's 404 from a proxy's), never
            // all of it: one longer than that is no JSON error of the API's.
            let body = try? await response.body.collect(upTo: 16 << 10)
            watched.withLock { $0.errorBody = body.map { Data($0.readableBytesView) } }
            return
        }
        watched.withLock { $0.opened = .now }
        state.withLock { $0.connections += 1 }
        set(.connected)
        logger.info("change stream open", metadata: ["resuming_after": "\(snapshot.lastEventID ?? "nothing")"])
        var parser = ServerSentEventParser(maxLineBytes: settings.maxLineBytes, maxEventBytes: settings.maxEventBytes)
        var budget = FloodBudget(rate: settings.maxBytesPerSecond)
        for try await chunk in response.body {
            watched.withLock { $0.lastByte = .now }
            guard budget.spend(chunk.readableBytes) else {
                throw Flood(description: "the stream sent more than \(settings.maxBytesPerSecond) bytes a second")
            }
            for event in try parser.feed(chunk.readableBytesView) {
                try await handle(event, fresh: fresh, watched: watched)
            }
            // Taking turns with what else runs on this event loop (runs, the control socket, the watchdog's pings):
            // without a suspension here, a stream whose bytes were always ready held its loop for as long as it lasted.
            await Task.yield()
        }
    }

    private func handle(_ event: ServerSentEvent, fresh: Bool, watched: WatchBox) async throws {
        switch event.type {
        case "ready":
            if let heartbeat = Self.heartbeat(in: event.data) {
                watched.withLock { $0.window = heartbeat * settings.silenceFactor }
                await watched.windowChanged.post(())
            }
            // Nothing was announced before this stream opened: whatever changed meanwhile is pulled once.
            if fresh { await notify(.everything) }
            remember(event.id)
        case "change":
            remember(event.id)
            state.withLock { $0.changeEvents += 1 }
            if let name = Self.collection(in: event.data), let collection = SyncCollection(rawValue: name) {
                await notify(.changed(collection))
            } else {
                logger.debug(
                    "change event for an unknown collection ignored", metadata: ["data": "\(event.data.prefix(200))"])
            }
        case "reset":
            remember(event.id)
            // Logged once a minute at most: a server sending resets by the hundred a second would fill the journal
            // past its rate limit and have the daemon's other messages dropped (the pulls are debounced anyway).
            let resets = state.withLock { snapshot in
                snapshot.resets += 1
                return snapshot.resets
            }
            let log = resetLogged.withLock { last -> Bool in
                guard last.map({ ContinuousClock.now - $0 >= .seconds(60) }) ?? true else { return false }
                last = .now
                return true
            }
            if log {
                logger.info(
                    "the server cannot replay what was missed: pulling every collection",
                    metadata: ["resets_so_far": "\(resets)"])
            }
            await notify(.everything)
        default:
            // Unknown types are for newer clients.
            remember(event.id)
        }
    }

    /// Takes an event's id as the one to resume after. An empty `id:` forgets it (as the SSE standard says: the
    /// next stream opens fresh); one that could not be sent back as a header — a control character, a space, a
    /// non-ASCII letter, more than 256 bytes — is ignored: remembered, it made every later connection fail on this
    /// side before anything was sent, and server push stopped for good.
    private func remember(_ id: String?) {
        guard let id else { return }
        if id.isEmpty {
            state.withLock { $0.lastEventID = nil }
            return
        }
        guard id.utf8.count <= 256, HeaderSafeText.isToken(id) else {
            logger.debug(
                "an event id that cannot be sent back as a header ignored", metadata: ["bytes": "\(id.utf8.count)"])
            return
        }
        state.withLock { $0.lastEventID = id }
    }

    private func set(_ value: State) {
        let changed = state.withLock { snapshot -> Bool in
            guard snapshot.state != value else { return false }
            snapshot.state = value
            snapshot.since = Date()
            return true
        }
        guard changed else { return }
        for observer in observers.withLock({ Array($0.values) }) { observer.yield(value) }
    }

    /// `{"heartbeat_ms": N}` from 10 ms, at most 15 s (the contract's longest interval: a server announcing an hour
    /// would have a dead stream taken for a quiet one for three).
    static func heartbeat(in data: String) -> Duration? {
        struct Ready: Decodable {
            var heartbeatMs: Int64?
            enum CodingKeys: String, CodingKey { case heartbeatMs = "heartbeat_ms" }
        }
        guard let milliseconds = (try? JSONDecoder().decode(Ready.self, from: Data(data.utf8)))?.heartbeatMs,
            milliseconds >= 10
        else { return nil }
        return .milliseconds(min(milliseconds, 15_000))
    }

    /// `{"collection": "orders"}`.
    static func collection(in data: String) -> String? {
        struct Change: Decodable { var collection: String? }
        return (try? JSONDecoder().decode(Change.self, from: Data(data.utf8)))?.collection
    }
}
