import Foundation
import RepairSyncReliability

/// Where the throttled link is and how its bytes are counted.
protocol ThrottledLink: Sendable {
    var name: String { get }
    /// How the bytes are counted, for the table.
    var counting: String { get }
    var serverLauncher: [String] { get }
    var serverArguments: [String] { get }
    var daemonLauncher: [String] { get }
    /// The base URL the daemon uses for `server`.
    func clientURL(for server: APIServerProcess) async throws -> String
    /// Bytes the server has sent through the link so far.
    func bytesFromServer() throws -> Int
    func tearDown()
}

/// Two network namespaces joined by a veth pair; the server's side sends at most `rate` bytes per second (tc tbf).
struct NamespaceLink: ThrottledLink {
    let daemonNS: String
    let serverNS: String
    let subnet: Int
    var name: String { "8 Mbit/s (tc tbf)" }
    var counting: String { "server veth tx_bytes, headers included" }
    var serverLauncher: [String] { ["/usr/sbin/ip", "netns", "exec", serverNS] }
    var serverArguments: [String] { ["--host", "10.79.\(subnet).2"] }
    var daemonLauncher: [String] { ["/usr/sbin/ip", "netns", "exec", daemonNS] }

    static func make(rate: Int) async throws -> NamespaceLink {
        let suffix = String(UInt32.random(in: 0...0xFFFF), radix: 16)
        let link = NamespaceLink(
            daemonNS: "rsb-\(suffix)-a", serverNS: "rsb-\(suffix)-b", subnet: Int.random(in: 1...250))
        do {
            try Self.run("/usr/sbin/ip", ["netns", "add", link.daemonNS])
            try Self.run("/usr/sbin/ip", ["netns", "add", link.serverNS])
            try Self.run(
                "/usr/sbin/ip",
                [
                    "link", "add", "va", "netns", link.daemonNS, "type", "veth", "peer", "name", "vb", "netns",
                    link.serverNS,
                ])
            try Self.run(
                "/usr/sbin/ip", ["-n", link.daemonNS, "addr", "add", "10.79.\(link.subnet).1/24", "dev", "va"])
            try Self.run(
                "/usr/sbin/ip", ["-n", link.serverNS, "addr", "add", "10.79.\(link.subnet).2/24", "dev", "vb"])
            for (ns, device) in [(link.daemonNS, "va"), (link.serverNS, "vb")] {
                try Self.run("/usr/sbin/ip", ["-n", ns, "link", "set", "lo", "up"])
                try Self.run("/usr/sbin/ip", ["-n", ns, "link", "set", device, "up"])
            }
            try Self.run(
                "/usr/sbin/tc",
                [
                    "-n", link.serverNS, "qdisc", "add", "dev", "vb", "root", "tbf", "rate", "\(rate * 8 / 1000)kbit",
                    "burst", "10kb",
                    "latency", "400ms",
                ])
        } catch {
            link.tearDown()
            throw error
        }
        return link
    }

    func clientURL(for server: APIServerProcess) async throws -> String { server.baseURL }

    func bytesFromServer() throws -> Int {
        let text = try Self.output(
            "/usr/sbin/ip", ["netns", "exec", serverNS, "cat", "/sys/class/net/vb/statistics/tx_bytes"])
        guard let bytes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError("tx_bytes of vb: \(text)")
        }
        return bytes
    }

    func tearDown() {
        _ = try? Self.run("/usr/sbin/ip", ["netns", "del", daemonNS])
        _ = try? Self.run("/usr/sbin/ip", ["netns", "del", serverNS])
    }

    static func run(_ tool: String, _ arguments: [String]) throws { _ = try output(tool, arguments) }

    static func output(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw BenchError("\(tool) \(arguments.joined(separator: " ")) failed: \(message)")
        }
        return text
    }
}

/// A user-space shaper on loopback (`ShapedLink`) at the same rate, counting the bytes it carries.
final class UserSpaceLink: ThrottledLink, @unchecked Sendable {
    private var links: [ShapedLink] = []
    private var carried = 0
    var name: String { "8 Mbit/s (user-space shaper)" }
    var counting: String { "bytes the shaper carried from the server" }
    var serverLauncher: [String] { [] }
    var serverArguments: [String] { [] }
    var daemonLauncher: [String] { [] }

    func clientURL(for server: APIServerProcess) async throws -> String {
        let link = try await ShapedLink.start(
            upstreamPort: server.port, delay: .zero, bytesPerSecond: BenchRun.throttledRate)
        links.append(link)
        return "http://127.0.0.1:\(link.port)"
    }

    func bytesFromServer() throws -> Int { links.reduce(0) { $0 + $1.bytesDown } }

    func tearDown() {
        for link in links { Task { try? await link.stop() } }
    }
}
