import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `repair-api-dev` as a process: seeded into its own database file, admin surface on, one token.
final class BackendProcess {
    static let token = "bench-token"

    let process: Process
    let baseURL: String
    /// What the seeder reported on standard error ("seeded N records in …").
    let seedLine: String

    /// Starts the backend and returns once it listens (after seeding, which happens first).
    init(binary: URL, database: String, orders: Int, log: String) throws {
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "--seed", "--orders", String(orders), "--db", database, "--port", "0", "--token", Self.token,
            "--admin", "--quiet",
        ]
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        self.process = process
        // The first line on standard output is always `listening on http://HOST:PORT`.
        var received = Data()
        while !received.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                throw BenchError("repair-api-dev exited before listening: \(Self.text(log))")
            }
            received += chunk
        }
        let line = String(decoding: received, as: UTF8.self).split(separator: "\n")[0]
        guard line.hasPrefix("listening on ") else { throw BenchError("repair-api-dev said: \(line)") }
        baseURL = String(line.dropFirst("listening on ".count))
        seedLine = Self.text(log).split(separator: "\n").first { $0.hasPrefix("seeded") }.map(String.init) ?? ""
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
