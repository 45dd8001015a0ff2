import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairSyncModels
import Testing

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
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--seed", "--orders", "50", "--port", "0", "--token", "t", "--quiet"]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let line = try await Task.detached { try Self.firstLine(of: stdout.fileHandleForReading) }.value
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
    func help() throws {
        let path = Self.executable.path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build repair-api-dev first: \(path)")
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--help"]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        let text = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        for flag in ["--host", "--port", "--db", "--token", "--token-file", "--seed", "--orders", "--seed-value",
            "--admin", "--quiet", "--defect"]
        {
            #expect(text.contains(flag), "\(flag) missing from --help")
        }
    }

    @Test("--defect drop_date_header starts the server with that defect on")
    func defectFlag() async throws {
        let path = Self.executable.path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build repair-api-dev first: \(path)")
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--port", "0", "--token", "t", "--quiet", "--defect", "drop_date_header"]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let line = try await Task.detached { try Self.firstLine(of: stdout.fileHandleForReading) }.value
        let match = try #require(line.wholeMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/), "\(line)")
        let health = try await RunningAddress(port: try #require(Int(match.1))).get("/api/v1/health", token: nil)
        #expect(health.status == 200)
        #expect(health.headers.first(name: "Date") == nil)
    }

    /// Reads up to the first newline (blocking; run off the cooperative pool).
    static func firstLine(of handle: FileHandle) throws -> String {
        var bytes = Data()
        while true {
            let chunk = handle.readData(ofLength: 1)
            if chunk.isEmpty || chunk == Data("\n".utf8) { break }
            bytes.append(chunk)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
