import AsyncHTTPClient
import Foundation
import Logging
import RepairSyncEngine
import RepairSyncModels
import RepairSyncTestSupport
import Synchronization
import Testing

@testable import RepairSyncDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The change-stream client against a server that answers what the tests script, connection by connection: ids that
/// cannot be sent back, a refusal before a fresh stream, a Retry-After given as a date, a storm of resets.
@Suite("Event stream: a hostile server", .timeLimit(.minutes(2)))
struct EventStreamHostileServerTests {
    static func events(_ text: String) -> String {
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + text
    }

    /// `Sun, 29 Nov 2026 10:04:40 GMT`.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// What the client asked the engine to pull.
    final class Notices: Sendable {
        private let list = Mutex<[EventStreamClient.Notice]>([])
        func append(_ notice: EventStreamClient.Notice) { list.withLock { $0.append(notice) } }
        func contains(_ notice: EventStreamClient.Notice) -> Bool { list.withLock { $0.contains(notice) } }
    }

    /// Runs `client` until `condition` holds (failing the test when it never does), then stops it.
    static func run(
        _ client: EventStreamClient, until what: String, _ condition: @escaping @Sendable () async throws -> Bool
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await PushStack.waitUntil(what, condition)
        }
    }

    static func client(_ server: ScriptedServer, gate: APIClient? = nil, log: CapturedLog? = nil)
        -> (EventStreamClient, Notices)
    {
        let notices = Notices()
        let captured = log ?? CapturedLog()
        let client = EventStreamClient(
            settings: PushStack.fastSettings, http: HTTPClient.shared, baseURL: "http://127.0.0.1:\(server.port)",
            token: "t", gate: gate, logger: Logger(label: "test.events") { _ in captured },
            notify: { notice in notices.append(notice) })
        return (client, notices)
    }

    @Test("an event id that cannot be sent back as a header is not kept: the client keeps reconnecting")
    func unsendableEventId() async throws {
        let server = try ScriptedServer([
            Self.events("event: ready\ndata: {}\n\nevent: change\nid: 12\u{1}3\ndata: {\"collection\":\"orders\"}\n\n")
        ])
        defer { server.stop() }
        let (client, _) = Self.client(server)
        try await Self.run(client, until: "three connections") { server.heads.count >= 3 }
        #expect(server.heads.allSatisfy { !$0.lowercased().contains("last-event-id") }, "\(server.heads)")
        #expect(client.snapshot.lastEventID == nil)
    }

    @Test("a stream opened without Last-Event-ID after a refused attempt is fresh: every collection is pulled")
    func freshAfterARefusal() async throws {
        let server = try ScriptedServer([
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            Self.events("event: ready\ndata: {}\n\n"),
        ])
        defer { server.stop() }
        let (client, notices) = Self.client(server)
        try await Self.run(client, until: "a pull of every collection") {
            notices.contains(.everything)
        }
    }

    @Test(
        "a 429's Retry-After given as an HTTP date holds the engine's requests until then, measured on the server's clock"
    )
    func retryAfterAsADate() async throws {
        let now = Date()
        let server = try ScriptedServer([
            "HTTP/1.1 429 Too Many Requests\r\nDate: \(Self.httpDate(now))\r\n"
                + "Retry-After: \(Self.httpDate(now.addingTimeInterval(120)))\r\nContent-Length: 0\r\n"
                + "Connection: close\r\n\r\n"
        ])
        defer { server.stop() }
        let gate = APIClient(configuration: .init(baseURL: "http://127.0.0.1:\(server.port)", token: "t"))
        let (client, _) = Self.client(server, gate: gate)
        try await Self.run(client, until: "the engine held for about two minutes") {
            (gate.remainingWait ?? .zero) > .seconds(60)
        }
        #expect(server.heads.count == 1, "no second attempt before the time")
        // A request held meanwhile is refused with the answer that asked to wait.
        do {
            _ = try await gate.health()
            Issue.record("a request went out during the hold")
        } catch {
            #expect(error.status == 429, "\(error)")
        }
        #expect(server.heads.count == 1)
    }

    @Test(
        "the API's own 503 with Retry-After (a maintenance window) holds the engine's requests, each refused as the 503 that asked to wait"
    )
    func maintenanceHoldSaysWhy() async throws {
        let server = try ScriptedServer([
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 120\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ])
        defer { server.stop() }
        let api = APIClient(configuration: .init(baseURL: "http://127.0.0.1:\(server.port)", token: "t"))
        await #expect(throws: APIError.self) { try await api.health() }
        #expect(server.heads.count == 1)
        do {
            _ = try await api.health()
            Issue.record("a request went out during the hold")
        } catch {
            // The status said "rate limited: HTTP 429" through a maintenance window, once.
            #expect(error.status == 503 && "\(error)".contains("HTTP 503"), "\(error)")
        }
        #expect(server.heads.count == 1)
    }

    @Test(
        "a 503 with Retry-After on the stream (a server capping its streams) waits the stream alone: the engine's requests go on"
    )
    func streamCapHoldsOnlyTheStream() async throws {
        let body = #"{"error":{"code":"unavailable","message":"too many streams"}}"#
        let server = try ScriptedServer([
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 120\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        ])
        defer { server.stop() }
        let gate = APIClient(configuration: .init(baseURL: "http://127.0.0.1:\(server.port)", token: "t"))
        let log = CapturedLog()
        let (client, _) = Self.client(server, gate: gate, log: log)
        try await Self.run(client, until: "the refusal taken") {
            log.entries.contains { $0.message.contains("refused") && $0.metadata.contains("HTTP 503") }
        }
        #expect(gate.remainingWait == nil, "the engine is not held for the stream's cap")
        #expect(server.heads.count == 1, "the stream itself waits its Retry-After")
    }

    @Test(
        "a 404 on the stream that is not the API's (a proxy's HTML page) turns server push off for minutes, not half an hour; the API's own 404 for half an hour"
    )
    func proxyPageOn404() async throws {
        let page = "<html><body><h1>404 Not Found</h1>nginx</body></html>"
        let apiError = #"{"error":{"code":"not_found","message":"no route for GET /api/v1/events"}}"#
        func notFound(_ type: String, _ body: String) -> String {
            "HTTP/1.1 404 Not Found\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body
        }
        var settings = PushStack.fastSettings
        settings.recheckUnsure = .milliseconds(200)
        func client(_ server: ScriptedServer, _ log: CapturedLog) -> EventStreamClient {
            EventStreamClient(
                settings: settings, http: HTTPClient.shared, baseURL: "http://127.0.0.1:\(server.port)", token: "t",
                gate: nil, logger: Logger(label: "test.events") { _ in log }, notify: { _ in })
        }

        // A deploy's proxy answered once: the stream is asked for again within the short recheck, and opens.
        let proxied = try ScriptedServer([
            notFound("text/html", page), Self.events("event: ready\nid: 1\ndata: {}\n\n: heartbeat\n\n"),
        ])
        defer { proxied.stop() }
        let log = CapturedLog()
        let afterProxy = client(proxied, log)
        try await Self.run(afterProxy, until: "the stream open after the proxy's 404") {
            afterProxy.snapshot.connections >= 1
        }
        let notice = log.entries.first { $0.message.contains("not the API's") }
        #expect(notice?.metadata.contains("0.2 seconds") == true, "\(log.entries)")

        // The API's own 404 (in its JSON error shape): the server has no stream, asked again after the long recheck.
        let withoutStream = try ScriptedServer([notFound("application/json", apiError)])
        defer { withoutStream.stop() }
        let apiLog = CapturedLog()
        let noStream = client(withoutStream, apiLog)
        try await Self.run(noStream, until: "the stream unavailable") { noStream.snapshot.state == .unavailable }
        let said = apiLog.entries.first { $0.message.contains("the API has no change stream (404)") }
        #expect(said?.metadata.contains("3600.0 seconds") == true, "\(apiLog.entries)")
    }

    @Test(
        "a stream that sends more than a stream of changes can (a flood) is cut, each time; what came before still counts"
    )
    func floodIsCut() async throws {
        let flood = String(repeating: "event: change\nid: 7\ndata: {\"collection\":\"orders\"}\n\n", count: 40_000)
        let server = try ScriptedServer([Self.events("event: ready\ndata: {}\n\n" + flood)])
        defer { server.stop() }
        let log = CapturedLog()
        var settings = PushStack.fastSettings
        settings.maxBytesPerSecond = 16 << 10
        let notices = Notices()
        let client = EventStreamClient(
            settings: settings, http: HTTPClient.shared, baseURL: "http://127.0.0.1:\(server.port)", token: "t",
            gate: nil, logger: Logger(label: "test.events") { _ in log }, notify: { notices.append($0) })
        try await Self.run(client, until: "the stream cut twice") {
            log.entries.filter { $0.message.contains("change stream cut") }.count >= 2
        }
        // 2 MiB sent each time; a bucket of 256 KiB (16 s at 16 KiB/s) lets a few thousand events through before the cut.
        #expect(client.snapshot.changeEvents < 40_000, "\(client.snapshot.changeEvents) events read")
        #expect(notices.contains(.changed(.orders)), "what came before the flood still counts")
    }

    @Test("a storm of resets is pulled for, and logged once, not once per reset")
    func resetStorm() async throws {
        let resets = (1...200).map { "event: reset\nid: \($0)\ndata: {}\n\n" }.joined()
        let server = try ScriptedServer([Self.events("event: ready\ndata: {}\n\n" + resets)])
        defer { server.stop() }
        let log = CapturedLog()
        let (client, _) = Self.client(server, log: log)
        try await Self.run(client, until: "the 200 resets read") { client.snapshot.resets >= 200 }
        let lines = log.entries.filter { $0.message.contains("cannot replay") }
        #expect(lines.count == 1, "\(lines.count) lines")
    }

    @Test("a 200 that is not an event stream (a portal's page) is a refusal naming its type, not a silence")
    func notAnEventStream() async throws {
        let server = try ScriptedServer([
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<html>Log in to the Wi-Fi</html>"
        ])
        defer { server.stop() }
        let log = CapturedLog()
        let (client, _) = Self.client(server, log: log)
        try await Self.run(client, until: "two refusals logged") {
            log.entries.filter { $0.metadata.contains("text/html") }.count >= 2
        }
        #expect(client.snapshot.silences == 0)
        #expect(!log.entries.contains { $0.message.contains("silent") }, "\(log.entries)")
    }

    @Test("a heartbeat announced longer than the contract's 15 s is taken as 15 s")
    func heartbeatClamped() {
        #expect(EventStreamClient.heartbeat(in: #"{"heartbeat_ms": 3600000}"#) == .seconds(15))
        #expect(EventStreamClient.heartbeat(in: #"{"heartbeat_ms": 5000}"#) == .seconds(5))
        #expect(EventStreamClient.heartbeat(in: #"{"heartbeat_ms": 1}"#) == nil)
    }
}

/// Accepts connections on loopback one after another; to the n-th it answers `answers[n]` (the last one again once
/// they run out) after reading its request head, which it keeps, and closes it.
final class ScriptedServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private final class Heads: Sendable {
        let list = Mutex<[String]>([])
    }
    private let received = Heads()
    var heads: [String] { received.list.withLock { $0 } }

    init(_ answers: [String]) throws {
        let (fd, port) = try LoopbackListener.open()
        listener = fd
        self.port = port
        let received = received
        Thread.detachNewThread {
            var served = 0
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                var head: [UInt8] = []
                var byte: UInt8 = 0
                while head.count < 65536, !head.suffix(4).elementsEqual("\r\n\r\n".utf8),
                    recv(connection, &byte, 1, 0) == 1
                {
                    head.append(byte)
                }
                received.list.withLock { $0.append(String(decoding: head, as: UTF8.self)) }
                let answer = Array(answers[min(served, answers.count - 1)].utf8)
                served += 1
                _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(connection)
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
