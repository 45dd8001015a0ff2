import BackendTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `repair-api-dev` as a separate process (possibly inside a network namespace), so a test can stop it and start it
/// again on the same port and database.
final class ServerProcess: @unchecked Sendable {
    let process: Process
    let baseURL: String

    /// Starts the server and waits for its `listening on URL` line.
    init(arguments: [String], launcher: [String] = []) async throws {
        let binary = DaemonHarness.binaries.appendingPathComponent("repair-api-dev")
        let process = Process()
        if launcher.isEmpty {
            process.executableURL = binary
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: launcher[0])
            process.arguments = Array(launcher.dropFirst()) + [binary.path] + arguments
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let line: String = try await DaemonHarness.blocking {
            var bytes: [UInt8] = []
            while true {
                let chunk = output.fileHandleForReading.readData(ofLength: 1)
                guard let byte = chunk.first else { throw CocoaError(.fileReadUnknown) }
                if byte == UInt8(ascii: "\n") { break }
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard line.hasPrefix("listening on ") else { throw CocoaError(.fileReadCorruptFile) }
        baseURL = String(line.dropFirst("listening on ".count))
    }

    var port: Int { Int(baseURL.split(separator: ":").last ?? "") ?? 0 }

    /// Stops the server (SIGTERM) and waits for it to exit.
    func stop() async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let process = process
        _ = try? await DaemonHarness.blocking { process.waitUntilExit() }
    }
}
