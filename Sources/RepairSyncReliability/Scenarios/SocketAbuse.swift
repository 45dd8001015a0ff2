internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncProtocol
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// Scenario 5: bad input on the control socket — a corpus of malformed requests, then a thousand idle connections
/// and slow writers dribbling a request a byte at a time — while a status-bar-like client asks for `status` every
/// 20 ms on a fresh connection. The daemon must not crash, must answer each bad request with the right JSON-RPC
/// error, must answer every `status`, and its memory must stay bounded.
public struct SocketAbuse: Sendable {
    public var idleConnections = 1000
    public var slowWriters = 50

    public init(idleConnections: Int = 1000, slowWriters: Int = 50) {
        self.idleConnections = idleConnections
        self.slowWriters = slowWriters
    }

    /// Malformed requests and the error code each must get.
    public static let corpus: [(name: String, bytes: [UInt8], code: Int)] = [
        ("truncated", Array(#"{"jsonrpc":"2.0","method":"stat"#.utf8), -32700),
        ("invalid UTF-8", [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], -32700),
        ("100,000 levels of nesting", Array(String(repeating: "[", count: 100_000).utf8), -32600),
        ("wrong types", Array(#"{"jsonrpc":"2.0","method":"getOrder","params":{"id":42},"id":1}"#.utf8), -32602),
        ("unknown method", Array(#"{"jsonrpc":"2.0","method":"rm -rf","id":1}"#.utf8), -32601),
        (
            "huge number",
            Array(#"{"jsonrpc":"2.0","method":"ping","id":"#.utf8) + Array(repeating: 0x39, count: 100_000) + [0x7D],
            -32600
        ),
        ("duplicate keys", Array(#"{"jsonrpc":"2.0","method":"ping","method":"status","id":1}"#.utf8), -32600),
        ("params of the wrong kind", Array(#"{"jsonrpc":"2.0","method":"ping","params":"x","id":1}"#.utf8), -32600),
        ("not an object", Array("42".utf8), -32600),
        ("10 MiB line", Array(repeating: 0x61, count: 10 << 20), -32600),
    ]

    public func run() async throws -> ScenarioReport {
        try await Workspace.with("socket-abuse") { workspace in
            try await ScenarioReport.measure("bad input on the socket") { report in
                try await ScenarioStack.with(workspace, orders: 50) { server, daemon in
                    try await daemon.start()
                    _ = try await daemon.call("sync", .object(["wait": .bool(true)]))
                    guard let pid = daemon.process?.pid else { throw ScenarioFailure("no daemon") }
                    let before = Self.rssKiB(pid)
                    let path = daemon.socketPath
                    let prober = StatusProber(path: path)
                    prober.start()

                    // 1. The corpus, one connection each; the daemon must still answer `ping` after each.
                    var right = 0
                    var pingsAfter = 0
                    for item in Self.corpus {
                        let reply: String? = try await Blocking.run {
                            let connection = try RawConnection(path: path)
                            connection.send(item.bytes + [0x0A])
                            return connection.readLine()
                        }
                        let code = reply.flatMap { try? JSONParser(limits: .init(maxDepth: 100)).parse($0) }?["error"]?[
                            "code"]?.intValue
                        if code == item.code {
                            right += 1
                        } else {
                            report.notes.append("\(item.name): \(reply?.prefix(200) ?? "no reply")")
                        }
                        if (try? await daemon.call("ping")) == .string("pong") { pingsAfter += 1 }
                    }
                    let junk: String? = try await Blocking.run {
                        let connection = try RawConnection(path: path)
                        connection.send(Array("[1, \"two\", null, {}, []]\n".utf8))
                        return connection.readLine()
                    }
                    if case .array(let errors)? = junk.flatMap({ try? JSONParser().parse($0) }),
                        errors.count == 5, errors.allSatisfy({ $0["error"]?["code"] == .number(-32600) })
                    {
                        right += 1
                    } else {
                        report.notes.append("batch of junk: \(junk ?? "no reply")")
                    }

                    // 2. A thousand idle connections, held open; then slow writers, a byte every 10 ms each.
                    let idle: [RawConnection] = try await Blocking.run {
                        try (0..<idleConnections).map { _ in try RawConnection(path: path, receiveTimeout: 1) }
                    }
                    let slow: (answered: Int, closed: Int) = try await Blocking.run {
                        let writers = try (0..<slowWriters).map { _ in try RawConnection(path: path, receiveTimeout: 10)
                        }
                        let request = Array(#"{"jsonrpc":"2.0","method":"ping","id":7}"#.utf8) + [0x0A]
                        for byte in request {
                            for writer in writers { writer.send([byte]) }
                            usleep(10_000)
                        }
                        var answered = 0
                        var closed = 0
                        for writer in writers {
                            if writer.readLine()?.contains("pong") == true { answered += 1 } else { closed += 1 }
                        }
                        return (answered, closed)
                    }
                    let states = idle.map(\.state)
                    let evicted = states.filter { $0 == .closedByPeer }.count
                    let refused = states.filter { $0 == .hasData }.count
                    let stillOpen = states.filter { $0 == .open }.count
                    let probe = prober.stop()
                    let alive = daemon.process?.isRunning == true
                    let pingAtEnd = (try? await daemon.call("ping")) == .string("pong")
                    let after = Self.rssKiB(pid)
                    withExtendedLifetime(idle) {}
                    await daemon.stop()
                    await server.stop()

                    report.add(.count("daemon crashes", alive && pingAtEnd ? 0 : 1, mustBe: 0))
                    report.add(
                        .count(
                            "malformed requests answered with the right JSON-RPC code", right,
                            mustBe: Self.corpus.count + 1))
                    report.add(
                        .count("ping answered after each malformed request", pingsAfter, mustBe: Self.corpus.count))
                    report.add(
                        Figure(
                            "idle connections: still open / closed to make room / refused",
                            "\(stillOpen) / \(evicted) / \(refused)"))
                    report.add(
                        Figure("slow writers answered / closed to make room", "\(slow.answered) / \(slow.closed)"))
                    report.add(.count("status calls not answered (every 20 ms throughout)", probe.failures, mustBe: 0))
                    report.notes += probe.errors.map { "a status call not answered: \($0)" }
                    report.add(
                        Figure(
                            "status calls answered, p99 / max latency",
                            "\(probe.answered), \(probe.p99) / \(probe.max) ms"))
                    report.add(
                        Figure(
                            "daemon RSS before → after", "\(before / 1024) → \(after / 1024) MiB", target: "≤ +64 MiB",
                            passed: after <= before + 64 * 1024))
                }
            }
        }
    }

    static func rssKiB(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// A status-bar-like client: `status` on a fresh connection every 20 ms on its own thread, counting what was
/// answered and how fast.
final class StatusProber: Sendable {
    struct Result {
        var answered: Int
        var failures: Int
        var p99: Int
        var max: Int
        /// The first few failures' errors.
        var errors: [String]
    }

    let path: String
    private let state = Mutex<(running: Bool, latencies: [Int], failures: Int, errors: [String])>((true, [], 0, []))
    /// Signalled by the probing thread when it has finished its last call.
    private let done = DispatchSemaphore(value: 0)

    init(path: String) { self.path = path }

    func start() {
        Thread { [self] in
            while state.withLock({ $0.running }) {
                let start = ContinuousClock.now
                do {
                    let client = try ControlClient(path: path)
                    _ = try client.call("status")
                    let elapsed = ContinuousClock.now - start
                    state.withLock {
                        $0.latencies.append(
                            Int(
                                elapsed.components.seconds * 1000 + elapsed.components.attoseconds
                                    / 1_000_000_000_000_000))
                    }
                } catch {
                    state.withLock { state in
                        state.failures += 1
                        if state.errors.count < 3 { state.errors.append(String(describing: error)) }
                    }
                }
                usleep(20_000)
            }
            done.signal()
        }.start()
    }

    /// Stops after the call in progress; what was measured.
    func stop() -> Result {
        state.withLock { $0.running = false }
        done.wait()
        return state.withLock { state in
            let sorted = state.latencies.sorted()
            let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
            return Result(
                answered: sorted.count, failures: state.failures, p99: p99, max: sorted.last ?? 0, errors: state.errors)
        }
    }
}
