import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairSyncModels
import RepairSyncProcesses
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `repair-api-dev` binary as a shop's demo or a soak runs it.
@Suite("repair-api-dev executable")
struct ExecutableTests {
    /// The executable next to the test bundle in the build directory.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("repair-api-dev")
    }

    @Test("--seed --port 0 prints the listening address first and serves the seeded data")
    func seededServer() async throws {
        let path = Self.executable.path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build repair-api-dev first: \(path)")
        let server = try ChildProcess(
            [path, "--seed", "--orders", "50", "--port", "0", "--token", "t", "--quiet"],
            environment: ProcessInfo.processInfo.environment, logPath: "/dev/null", pipeOutput: true)
        defer { server.signal(SIGTERM) }
        let line = await server.readLine(startingWith: "listening on") ?? "(no address printed)"
        let match = try #require(line.wholeMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/), "\(line)")
        let port = try #require(Int(match.1))

        let backend = RunningAddress(port: port)
        let health = try await backend.get("/api/v1/health", token: nil)
        #expect(health.status == 200)
        let page = try await backend.get("/api/v1/orders/changes?limit=1000", token: "t")
        let orders = try JSONDecoder().decode(ChangesPage<Order>.self, from: page.body)
        #expect(orders.data.count == 50)
        #expect(!orders.hasMore)
        #expect(try await backend.get("/api/v1/orders/changes", token: "nope").status == 401)
    }

    @Test("--help documents every flag")
    func help() async throws {
        let path = Self.executable.path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build repair-api-dev first: \(path)")
        let (status, text) = try await ChildProcess.run([path, "--help"])
        #expect(status == 0)
        for flag in [
            "--host", "--port", "--db", "--token", "--token-file", "--seed", "--orders", "--seed-value",
            "--admin", "--quiet", "--defect",
        ] {
            #expect(text.contains(flag), "\(flag) missing from --help")
        }
    }

    @Test("--defect drop_date_header starts the server with that defect on")
    func defectFlag() async throws {
        let path = Self.executable.path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build repair-api-dev first: \(path)")
        let server = try ChildProcess(
            [path, "--port", "0", "--token", "t", "--quiet", "--defect", "drop_date_header"],
            environment: ProcessInfo.processInfo.environment, logPath: "/dev/null", pipeOutput: true)
        defer { server.signal(SIGTERM) }
        let line = await server.readLine(startingWith: "listening on") ?? "(no address printed)"
        let match = try #require(line.wholeMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/), "\(line)")
        let health = try await RunningAddress(port: try #require(Int(match.1))).get("/api/v1/health", token: nil)
        #expect(health.status == 200)
        #expect(health.headers.first(name: "Date") == nil)
    }
}
