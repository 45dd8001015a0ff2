import AsyncHTTPClient
import Foundation
import RepairSyncEngine
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An answer whose headers arrive and whose body then stops — a proxy, a Wi-Fi or NAT path that died mid-download —
/// fails within the request's timeout instead of holding the run, and every run after it, forever.
@Suite("A body that stalls", .timeLimit(.minutes(1)))
struct StalledBodyTests {
    @Test("headers, then 1 byte of a 1000-byte body, then silence: the request fails as interrupted within its timeout")
    func bodyStallsAfterTheHeaders() async throws {
        let waited = try await Self.interrupted(by: StallingServer(), saying: ["stopped coming"])
        // Bounded, not timed: a loaded machine may take seconds to connect; without the deadline it never returns.
        #expect(waited < .seconds(30), "waited \(waited) for a 1 s timeout")
        #expect(waited >= .milliseconds(900), "gave up before the timeout: \(waited)")
    }

    /// Asks `server` for a page with `timeout`, expects the request to fail as interrupted with a reason that says
    /// one of `saying`, and returns how long it took.
    static func interrupted(
        by server: StallingServer, saying: [String], timeout: Duration = .seconds(1)
    ) async throws -> Duration {
        defer { server.stop() }
        let http = try TransportSettings().makeHTTPClient()
        let transport = HTTPTransport(baseURL: "http://127.0.0.1:\(server.port)", http: http)
        let started = ContinuousClock.now
        do {
            _ = try await transport.send(
                TransportRequest(method: "GET", path: "/api/v1/orders/changes"), timeout: timeout)
            Issue.record("a body that did not come whole in time was taken for an answer")
        } catch {
            if case .interrupted(let reason) = error {
                #expect(saying.contains { reason.contains($0) }, "\(reason)")
            } else {
                Issue.record("\(error)")
            }
        }
        let waited = ContinuousClock.now - started
        try await http.shutdown()
        return waited
    }
}

extension StalledBodyTests {
    @Test("a body that keeps coming, slowly, past the timeout: taken whole — the timeout is for silence, not for size")
    func slowBodyArrives() async throws {
        let server = try StallingServer(trickling: true)
        defer { server.stop() }
        let http = try TransportSettings().makeHTTPClient()
        let transport = HTTPTransport(baseURL: "http://127.0.0.1:\(server.port)", http: http)
        let response = try await transport.send(
            TransportRequest(method: "GET", path: "/api/v1/orders/changes"), timeout: .seconds(1))
        #expect(response.body.count == 1000)
        #expect(String(decoding: response.body, as: UTF8.self).hasSuffix(#"aaa"}"#))
        try await http.shutdown()
    }
}

extension StalledBodyTests {
    @Test(
        "a body that trickles — a byte every 100 ms, never silent — fails within a few timeouts (as too slow), instead of holding the run for as long as it takes"
    )
    func tricklingBodyFails() async throws {
        // A 3 s timeout: a byte every 100 ms is never silent that long, even when a loaded machine holds the reading
        // task back for a second (with 1 s, CI's parallel tests made it look silent).
        // And when CI's parallel tests starve the reader for longer still (28 s once), the watcher sees silence
        // first: either way the request ends. Without the check it would last the body's 100 s.
        let waited = try await Self.interrupted(
            by: StallingServer(dripping: true), saying: ["too slowly", "stopped coming"], timeout: .seconds(3))
        // The body takes 100 s to come whole; bounded, not timed.
        #expect(waited < .seconds(40), "waited \(waited)")
    }
}

/// Accepts one connection on loopback, reads the request's head, answers the headers of a 1000-byte body and its
/// first byte, and then says nothing more until stopped — or, `trickling`, sends the rest 100 bytes at a time, 250 ms
/// apart (a slow link: 2.5 s for the body), or, `dripping`, a byte every 100 ms (100 s for the body).
final class StallingServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let stopped = DispatchSemaphore(value: 0)

    init(trickling: Bool = false, dripping: Bool = false) throws {
        let (fd, port) = try LoopbackListener.open(backlog: 4)
        listener = fd
        self.port = port
        let stopped = stopped
        Thread.detachNewThread {
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var head: [UInt8] = []
            var byte: UInt8 = 0
            while !head.ends(with: Array("\r\n\r\n".utf8)), recv(connection, &byte, 1, 0) == 1 { head.append(byte) }
            let answer = Array(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{".utf8)
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if dripping {
                // The rest a byte at a time, 100 ms apart, until it is all sent or the client goes.
                for _ in 0..<999 {
                    Thread.sleep(forTimeInterval: 0.1)
                    var byte = UInt8(ascii: " ")
                    guard send(connection, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                }
            } else if trickling {
                // The rest of a JSON object of 1000 bytes: `{"x":"aaa…"}`.
                let rest =
                    Array(#""x":""#.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 1000 - 8) + Array(#""}"#.utf8)
                for start in stride(from: 0, to: rest.count, by: 100) {
                    Thread.sleep(forTimeInterval: 0.25)
                    let piece = Array(rest[start..<min(start + 100, rest.count)])
                    _ = piece.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
            }
            stopped.wait()
        }
    }

    func stop() {
        stopped.signal()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

extension Array where Element: Equatable {
    fileprivate func ends(with suffix: [Element]) -> Bool {
        count >= suffix.count && Array(self.suffix(suffix.count)) == suffix
    }
}
