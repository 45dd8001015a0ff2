internal import AsyncHTTPClient
internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol
internal import Synchronization

/// One connection to the change stream (`GET /api/v1/events`, docs/api.md section 4.8), read in the background with
/// the daemon's own parser (`ServerSentEventParser`) while the run goes on, so that a check can look at what arrived
/// and when.
///
/// Bounded in every direction: the answer's head must come within the request timeout; lines and events are held to
/// the contract's 4 KiB and 16 KiB by the parser; a connection reads at most `maxBytes` and stays open at most
/// `lifetime`, after which it is closed and says why. Every wait (`wait(until:for:)`) has a deadline.
///
/// ```swift
/// switch await EventStreamReader.open(http: http, baseURL: base, token: token, lastEventID: nil, headTimeout: .seconds(30)) {
/// case .stream(let stream):
///     let seen = await stream.wait(until: .now + .seconds(5)) { $0.events.contains { $0.type == "ready" } }
///     stream.close()
/// case .answered(let exchange): print(exchange.status ?? 0)   // 404: the server has no stream
/// case .failed(let reason): print(reason)
/// }
/// ```
final class EventStreamReader: Sendable {
    /// What came in one chunk: when, how many bytes, and the events it completed.
    struct Chunk: Sendable {
        var at: ContinuousClock.Instant
        var bytes: Int
        var events: [ServerSentEvent]
    }

    /// Everything the connection received so far.
    struct Received: Sendable {
        var chunks: [Chunk] = []
        var bytes = 0
        /// Why the connection is over (the server ended it, a bound was reached, it was closed); nil while open.
        var ended: String?
        /// Bumped by every chunk and by the end, for waiters.
        var generation = 0

        var events: [ServerSentEvent] { chunks.flatMap(\.events) }
    }

    enum Opening: Sendable {
        case stream(EventStreamReader)
        /// Not an event stream: the answer as an exchange (its body read up to 16 KiB).
        case answered(Exchange)
        /// No answer at all.
        case failed(String)
    }

    let headers: [(name: String, value: String)]
    let opened: ContinuousClock.Instant
    private let state = Mutex(Received())
    private let waiters = Mutex<[Int: CheckedContinuation<Void, Never>]>([:])
    private let nextWaiter = Mutex(0)
    private let reader = Mutex<Task<Void, Never>?>(nil)

    static let path = "/api/v1/events"

    private init(headers: [(name: String, value: String)]) {
        self.headers = headers
        opened = .now
    }

    /// Opens the stream (with the token unless it is nil, and `Last-Event-ID` when given) and starts reading it.
    static func open(
        http: HTTPClient, baseURL: String, token: String?, lastEventID: String?, headTimeout: Duration,
        maxBytes: Int = 1 << 20, lifetime: Duration = .seconds(600)
    ) async -> Opening {
        var request = HTTPClientRequest(url: baseURL + path)
        request.headers.add(name: "Accept", value: "text/event-stream")
        request.headers.add(name: "User-Agent", value: ProductInfo.userAgent)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        let response: HTTPClientResponse
        do {
            // The deadline bounds the head only: AsyncHTTPClient lets it go once the head has come.
            response = try await http.execute(request, deadline: .now() + TimeAmount(headTimeout))
        } catch {
            return .failed("\(error)")
        }
        let headers = response.headers.map { (name: $0.name, value: $0.value) }
        let contentType = response.headers.first(name: "Content-Type")?.lowercased() ?? ""
        guard response.status == .ok, contentType.hasPrefix("text/event-stream") else {
            let body = (try? await response.body.collect(upTo: 16 << 10)).map { Data($0.readableBytesView) } ?? Data()
            let lastEventHeader = lastEventID.map { " (Last-Event-ID \($0))" } ?? ""
            return .answered(
                Exchange(
                    method: "GET", path: path + lastEventHeader, status: Int(response.status.code), headers: headers,
                    body: body, failure: nil))
        }
        let stream = EventStreamReader(headers: headers)
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await stream.read(response.body, maxBytes: maxBytes) }
                group.addTask {
                    try? await Task.sleep(for: lifetime)
                    if !Task.isCancelled { stream.end("open longer than \(lifetime): closed by the tool") }
                }
                _ = await group.next()
                group.cancelAll()
            }
        }
        stream.reader.withLock { $0 = task }
        return .stream(stream)
    }

    private func read(_ body: HTTPClientResponse.Body, maxBytes: Int) async {
        var parser = ServerSentEventParser()
        do {
            for try await buffer in body {
                let events = try parser.feed(buffer.readableBytesView)
                let over = state.withLock { state -> Bool in
                    guard state.ended == nil else { return true }
                    state.chunks.append(Chunk(at: .now, bytes: buffer.readableBytes, events: events))
                    state.bytes += buffer.readableBytes
                    state.generation += 1
                    return state.bytes > maxBytes
                }
                wake()
                if over {
                    end("more than \(maxBytes) bytes: closed by the tool")
                    return
                }
            }
            end("the server ended the stream")
        } catch let failure as ServerSentEventParser.Failure {
            end("not a stream the daemon reads: \(failure)")
        } catch {
            end(Task.isCancelled ? "closed by the tool" : "the connection failed: \(error)")
        }
    }

    /// What has arrived so far.
    var received: Received { state.withLock { $0 } }

    /// Waits until `satisfied` holds for what has arrived, the stream ends, or `deadline` passes; returns what arrived.
    func wait(until deadline: ContinuousClock.Instant, for satisfied: @Sendable (Received) -> Bool) async -> Received {
        while true {
            let now = received
            if satisfied(now) || now.ended != nil || ContinuousClock.now >= deadline { return now }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.changed(after: now.generation) }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                _ = await group.next()
                group.cancelAll()
            }
        }
    }

    /// Returns once something arrived after `generation` (or the stream ended), or the task is cancelled.
    private func changed(after generation: Int) async {
        let id = nextWaiter.withLock { value -> Int in
            value += 1
            return value
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = waiters.withLock { waiters -> Bool in
                    let moved = state.withLock { $0.generation != generation || $0.ended != nil }
                    if moved || Task.isCancelled { return true }
                    waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            waiters.withLock { $0.removeValue(forKey: id) }?.resume()
        }
    }

    private func wake() {
        let waiting = waiters.withLock { waiters in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    private func end(_ reason: String) {
        state.withLock { state in
            if state.ended == nil {
                state.ended = reason
                state.generation += 1
            }
        }
        wake()
    }

    /// Closes the connection (idempotent).
    func close() {
        end("closed by the tool")
        reader.withLock { $0 }?.cancel()
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The collections named by the `change` events among `events` (names a client does not know are left out).
    static func announced(_ events: [ServerSentEvent]) -> Set<SyncCollection> {
        Set(
            events.filter { $0.type == "change" }.compactMap { event in
                (try? JSONText.parse(Data(event.data.utf8)))?["collection"]?.stringValue.flatMap(
                    SyncCollection.init(rawValue:))
            })
    }
}
