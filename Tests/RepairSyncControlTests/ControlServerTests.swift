import Foundation
import NIOCore
import NIOPosix
import RepairSyncControlClient
import RepairSyncControlServer
import RepairSyncProtocol
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket over a real Unix stream socket: framing, permissions, stale files, limits, many clients.
@Suite("Control server", .timeLimit(.minutes(1)))
struct ControlServerTests {
    /// `ping` → "pong", `echo {text}` → text, `whoami` → the peer's uid, `fill` → 64 KiB of text, `count {to}` →
    /// true, then notifications `tick {n}` for n in 1...to.
    static let dispatcher = JSONRPCDispatcher<ControlRequestContext> { method, params, context in
        switch method {
        case "ping": return .string("pong")
        case "echo": return .string(try EchoParams.decode(from: params).text)
        case "whoami": return .number(Int(context.peer.uid))
        case "fill": return .string(String(repeating: "x", count: 64 * 1024))
        case "count":
            let to = try CountParams.decode(from: params).to ?? 3
            try context.subscribe(
                method: "tick",
                to: AsyncStream { continuation in
                    for n in 1...to { continuation.yield(.object(["n": .number(n)])) }
                    continuation.finish()
                })
            return .bool(true)
        default: throw JSONRPCError.methodNotFound(method)
        }
    }

    /// Runs a server on a fresh socket path for the duration of `body`.
    static func withServer<T: Sendable>(
        limits: ControlServer.Limits = ControlServer.Limits(),
        _ body: @Sendable (_ path: String, _ directory: TemporaryDirectory) async throws -> T
    ) async throws -> T {
        let directory = try TemporaryDirectory(prefix: "control")
        let path = directory.path("run/control.sock")
        let server = ControlServer(path: path, limits: limits, dispatcher: dispatcher)
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await server.run { readyContinuation.yield() }
                return nil
            }
            var iterator = ready.makeAsyncIterator()
            await iterator.next()
            let result = try await body(path, directory)
            group.cancelAll()
            while (try await group.next()) != nil {}
            return result
        }
    }

    @Test("a request line gets its reply line; the socket is 0660 in a 0750 directory; the peer is the kernel's uid")
    func roundTrip() async throws {
        try await Self.withServer { path, _ in
            let replies = try await LineClient.exchange(
                path, [#"{"jsonrpc":"2.0","method":"ping","id":1}"#, #"{"jsonrpc":"2.0","method":"whoami","id":2}"#])
            #expect(
                replies == [
                    #"{"jsonrpc":"2.0","result":"pong","id":1}"#, #"{"jsonrpc":"2.0","result":\#(getuid()),"id":2}"#,
                ])
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o660)
            #expect(stat((path as NSString).deletingLastPathComponent, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o750)
        }
    }

    @Test("a malformed line gets a JSON-RPC error and the connection keeps working")
    func malformedThenValid() async throws {
        try await Self.withServer { path, _ in
            let replies = try await LineClient.exchange(
                path, ["{not json", #"{"jsonrpc":"2.0","method":"ping","id":"a"}"#])
            #expect(replies.count == 2)
            #expect(replies[0].contains("-32700"))
            #expect(replies[1] == #"{"jsonrpc":"2.0","result":"pong","id":"a"}"#)
        }
    }

    @Test("a line over the limit gets one error reply and the connection is closed, without buffering the rest")
    func lineTooLong() async throws {
        try await Self.withServer(limits: .init(maxLineBytes: 4096)) { path, _ in
            let huge = String(repeating: "a", count: 64 * 1024)
            let replies = try await LineClient.exchange(path, [huge, #"{"jsonrpc":"2.0","method":"ping","id":1}"#])
            #expect(replies.count == 1, "\(replies)")
            #expect(replies.first?.contains("-32600") == true)
            // The server is still up for others.
            #expect(try await LineClient.exchange(path, [#"{"jsonrpc":"2.0","method":"ping","id":1}"#]).count == 1)
        }
    }

    @Test(
        "a line of exactly the limit is taken with \\n or \\r\\n endings (the \\r is not the request's); one byte more is not"
    )
    func lineOfExactlyTheLimit() async throws {
        try await Self.withServer(limits: .init(maxLineBytes: 4096)) { path, _ in
            let ping = #"{"jsonrpc":"2.0","method":"ping","id":1}"#
            // JSON allows the spaces: a request of exactly 4,096 bytes.
            let exact = ping + String(repeating: " ", count: 4096 - ping.utf8.count)
            let pong = #"{"jsonrpc":"2.0","result":"pong","id":1}"# + "\n"
            for ending in ["\n", "\r\n"] {
                #expect(
                    try await RawClient.sendThenCloseOutput(path, exact + ending) == pong, "\(ending.debugDescription)")
            }
            let over = try await RawClient.sendThenCloseOutput(path, exact + " \r\n")
            #expect(over.contains("-32600"), "\(over)")
        }
    }

    @Test(
        "a client that sends its requests and closes its side (echo … | socat) gets every reply, the last line's without its newline"
    )
    func halfClosedInput() async throws {
        try await Self.withServer { path, _ in
            let ping = #"{"jsonrpc":"2.0","method":"ping","id":1}"#
            let echo = #"{"jsonrpc":"2.0","method":"echo","params":{"text":"last"},"id":2}"#
            let answered = try await RawClient.sendThenCloseOutput(path, ping + "\n" + echo)
            #expect(
                answered == #"{"jsonrpc":"2.0","result":"pong","id":1}"# + "\n"
                    + #"{"jsonrpc":"2.0","result":"last","id":2}"# + "\n")
            #expect(
                try await RawClient.sendThenCloseOutput(path, ping + "\n")
                    == #"{"jsonrpc":"2.0","result":"pong","id":1}"# + "\n")
        }
    }

    @Test(
        "clients that send and never read their replies do not lock their user out: once their replies have waited 10 s, a newcomer takes a place"
    )
    func deafClientsMakeRoom() async throws {
        try await Self.withServer(limits: .init(maxConnections: 100, maxConnectionsPerUID: 3)) { path, _ in
            // Three connections, each asking for 1 MiB of replies it never reads: the daemon's writes stall.
            let line = #"{"jsonrpc":"2.0","method":"fill","id":1}"# + "\n"
            var deaf: [Int32] = []
            defer { for fd in deaf { close(fd) } }
            for _ in 0..<3 {
                let fd = try RawClient.connect(path)
                deaf.append(fd)
                let requests = Array(String(repeating: line, count: 16).utf8)
                #expect(
                    requests.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        == requests.count)
            }
            // The same user keeps asking for its status: past 10 s, a deaf connection is closed to make room.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, !deaf.contains(where: RawClient.isClosedByPeer) {
                _ = try await RawClient.sendThenCloseOutput(path, #"{"jsonrpc":"2.0","method":"ping","id":1}"#)
                // Until the daemon closes one of them, or 200 ms before asking again.
                try await RawClient.waitForClose(deaf, milliseconds: 200)
            }
            #expect(deaf.contains(where: RawClient.isClosedByPeer), "no deaf connection was closed to make room")
            let reply = try await RawClient.sendThenCloseOutput(path, #"{"jsonrpc":"2.0","method":"ping","id":1}"#)
            #expect(reply.contains(#""result":"pong""#), "the user is locked out by its own deaf connections: \(reply)")
        }
    }

    @Test("100 concurrent clients each get their own replies")
    func concurrentClients() async throws {
        try await Self.withServer { path, _ in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for client in 0..<100 {
                    group.addTask {
                        let lines = (0..<5).map {
                            #"{"jsonrpc":"2.0","method":"echo","params":{"text":"c\#(client)-\#($0)"},"id":\#($0)}"#
                        }
                        let replies = try await LineClient.exchange(path, lines)
                        return replies
                            == (0..<5).map { #"{"jsonrpc":"2.0","result":"c\#(client)-\#($0)","id":\#($0)}"# }
                    }
                }
                var correct = 0
                for try await ok in group where ok { correct += 1 }
                #expect(correct == 100)
            }
        }
    }

    @Test(
        "at the per-uid limit the longest-idle connection makes room: the newcomer is answered, the others keep working"
    )
    func connectionLimitEvictsIdle() async throws {
        try await Self.withServer(limits: .init(maxConnections: 100, maxConnectionsPerUID: 2)) { path, _ in
            let ping = #"{"jsonrpc":"2.0","method":"ping","id":1}"#
            try await LineClient.session(path) { oldest in
                try await LineClient.session(path) { newer in
                    #expect(try await oldest.exchange([ping]).count == 1)
                    #expect(try await newer.exchange([ping]).count == 1)
                    // A third connection of the same uid: the oldest idle one is closed for it.
                    let third = try await LineClient.exchange(path, [ping])
                    #expect(third.first?.contains("pong") == true, "\(third)")
                    #expect(try await oldest.readToEnd() == 0, "the longest-idle connection was closed")
                    #expect(try await newer.exchange([ping]).first?.contains("pong") == true)
                }
            }
        }
    }

    @Test("with every connection subscribed (none idle), one over the per-uid limit is refused with -32005")
    func connectionLimitRefusesWhenNoneIdle() async throws {
        try await Self.withServer(limits: .init(maxConnections: 100, maxConnectionsPerUID: 2)) { path, _ in
            let subscribe = #"{"jsonrpc":"2.0","method":"count","params":{"to":1},"id":1}"#
            let ping = #"{"jsonrpc":"2.0","method":"ping","id":1}"#
            let refused = try await LineClient.session(path) { first in
                try await LineClient.session(path) { second in
                    _ = try await first.exchange([subscribe])
                    _ = try await first.readLines(1)
                    _ = try await second.exchange([subscribe])
                    _ = try await second.readLines(1)
                    let refused = try await LineClient.exchange(path, [ping])
                    // The subscribers were not closed to make room.
                    #expect(try await first.exchange([ping]).first?.contains("pong") == true)
                    return refused
                }
            }
            #expect(refused.count == 1)
            #expect(refused.first?.contains("-32005") == true, "\(refused)")
        }
    }

    @Test("a subscription delivers notifications in order after the reply; a second subscription is refused")
    func subscription() async throws {
        try await Self.withServer { path, _ in
            let lines = try await LineClient.session(path) { session in
                var lines = try await session.exchange([#"{"jsonrpc":"2.0","method":"count","params":{"to":3},"id":1}"#]
                )
                for _ in 0..<3 { lines += try await session.readLines(1) }
                lines += try await session.exchange([#"{"jsonrpc":"2.0","method":"count","id":2}"#])
                return lines
            }
            #expect(lines.count == 5, "\(lines)")
            #expect(lines.first == #"{"jsonrpc":"2.0","result":true,"id":1}"#)
            #expect(Array(lines[1...3]) == (1...3).map { #"{"jsonrpc":"2.0","method":"tick","params":{"n":\#($0)}}"# })
            #expect(lines.last?.contains("already subscribed") == true)
        }
    }

    @Test("a subscriber that falls too far behind is disconnected instead of buffered without bound; others go on")
    func slowSubscriber() async throws {
        try await Self.withServer(limits: .init(maxQueuedNotifications: 10)) { path, _ in
            let closed = try await LineClient.session(path) { session in
                // 100,000 notifications arrive far faster than they can be written: past 10 queued the server must
                // stop queueing and close the connection, so reading ends well before the last one.
                _ = try await session.exchange([#"{"jsonrpc":"2.0","method":"count","params":{"to":100000},"id":1}"#])
                return try await session.readToEnd()
            }
            #expect(closed < 100_000, "read \(closed) notifications: the server kept queueing")
            let replies = try await LineClient.exchange(path, [#"{"jsonrpc":"2.0","method":"ping","id":1}"#])
            #expect(replies.count == 1)
        }
    }

    @Test("a stale socket file left by a crash is replaced; a live one makes a second server refuse to start")
    func staleAndLiveSockets() async throws {
        let directory = try TemporaryDirectory(prefix: "control-stale")
        let path = directory.path("control.sock")
        // A socket file with nobody listening: what a SIGKILLed daemon leaves behind.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(UnixSocketAddress.with(path) { bind(fd, $0, $1) } == 0)
        close(fd)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(throws: Never.self) { try ControlServer.prepare(path: path) }
        #expect(!FileManager.default.fileExists(atPath: path))

        try await Self.withServer { livePath, _ in
            do {
                try ControlServer.prepare(path: livePath)
                Issue.record("a second daemon would have taken over a live socket")
            } catch {
                #expect("\(error)".contains("already listening"))
            }
            let replies = try await LineClient.exchange(livePath, [#"{"jsonrpc":"2.0","method":"ping","id":1}"#])
            #expect(replies.count == 1)
        }

        #expect(FileManager.default.createFile(atPath: directory.path("plain-file"), contents: Data()))
        #expect(throws: ControlServer.SetupError.self) { try ControlServer.prepare(path: directory.path("plain-file")) }
    }
}

/// A newline-delimited client over NIO.
enum LineClient {
    /// Connects, runs `body` with the open connection, then closes it.
    static func session<T: Sendable>(_ path: String, _ body: (LineSession) async throws -> T) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(LineSession(iterator: inbound.makeAsyncIterator(), outbound: outbound))
        }
    }

    /// Connects, sends each line, and collects reply lines until every line is answered or the server closed.
    static func exchange(_ path: String, _ lines: [String]) async throws -> [String] {
        try await session(path) { try await $0.exchange(lines) }
    }
}

/// A client on the C socket calls, for what NIO's client does not do: close its output and read on.
enum RawClient {
    /// Connects, sends `text`, closes its side of the connection (`shutdown(SHUT_WR)`), and reads until the server
    /// closes (at most 10 s without a byte).
    static func sendThenCloseOutput(_ path: String, _ text: String) async throws -> String {
        try await onThread {
            let fd = try connect(path)
            defer { close(fd) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(text.utf8)
            // A server that refused the connection may have closed it already: what it said is still read below.
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            shutdown(fd, Int32(SHUT_WR))
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += chunk.prefix(count)
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Runs blocking socket calls on a thread of their own: on the cooperative pool (as many threads as cores) they
    /// would starve the server's own tasks.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// The server closed the connection (unread data may still wait in it).
    static func isClosedByPeer(_ fd: Int32) -> Bool {
        // POLLHUP comes whatever was asked for: a Unix socket's peer closed both ways.
        var entry = pollfd(fd: fd, events: 0, revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLHUP) != 0
    }

    /// Waits until the server closes one of `fds`, at most `milliseconds` (poll for the hang-up itself).
    static func waitForClose(_ fds: [Int32], milliseconds: Int32) async throws {
        try await onThread {
            var entries = fds.map { pollfd(fd: $0, events: 0, revents: 0) }
            _ = poll(&entries, nfds_t(entries.count), milliseconds)
        }
    }

    /// A connected socket (the caller closes it).
    static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        guard UnixSocketAddress.with(path, { Glibc.connect(fd, $0, $1) }) == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }
}

/// One open client connection.
final class LineSession {
    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var pending = Data()

    init(
        iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.iterator = iterator
        self.outbound = outbound
    }

    /// Sends each line and waits for its reply line (these tests send no notifications).
    func exchange(_ lines: [String]) async throws -> [String] {
        var replies: [String] = []
        for line in lines {
            do {
                try await outbound.write(ByteBuffer(string: line + "\n"))
            } catch ChannelError.ioOnClosedChannel {
                return replies  // the server closed the connection
            }
            guard let reply = try await nextLine() else { return replies }
            replies.append(reply)
        }
        return replies
    }

    /// Reads `count` more lines.
    func readLines(_ count: Int) async throws -> [String] {
        var lines: [String] = []
        while lines.count < count, let line = try await nextLine() { lines.append(line) }
        return lines
    }

    /// Reads until the server closes; returns how many lines came.
    func readToEnd() async throws -> Int {
        var count = 0
        do {
            while try await nextLine() != nil { count += 1 }
        } catch {
            // A reset at the end is an end too.
        }
        return count
    }

    private func nextLine() async throws -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[(newline + 1)...])
                return line
            }
            guard let buffer = try await iterator.next() else { return nil }
            pending.append(contentsOf: buffer.readableBytesView)
        }
    }
}

/// `echo`'s params.
struct EchoParams: ControlParams {
    var text: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case text
    }
}

/// `count`'s params: `to` in 1...100000.
struct CountParams: ControlParams {
    var to: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case to
    }

    func validate() throws(JSONRPCError) {
        if let to, !(1...100_000).contains(to) { throw .invalidParams("to", "must be an integer in 1...100000") }
    }
}
