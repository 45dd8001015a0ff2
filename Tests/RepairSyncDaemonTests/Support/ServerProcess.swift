import BackendTestSupport
import Foundation
import RepairSyncProcesses

#if canImport(Glibc)
    import Glibc
#endif

/// `repair-api-dev` as a separate process (possibly inside a network namespace), so a test can stop it and start it
/// again on the same port and database.
final class ServerProcess: @unchecked Sendable {
    let process: ChildProcess
    let baseURL: String

    /// Starts the server and waits for its `listening on URL` line.
    init(arguments: [String], launcher: [String] = []) async throws {
        let binary = DaemonHarness.binaries.appendingPathComponent("repair-api-dev")
        process = try ChildProcess(
            launcher + [binary.path] + arguments, environment: ProcessInfo.processInfo.environment,
            logPath: "/dev/null", pipeOutput: true)
        guard let line = await process.readLine(startingWith: "listening on ") else {
            process.signal(SIGKILL)
            throw CocoaError(.fileReadCorruptFile)
        }
        baseURL = String(line.dropFirst("listening on ".count))
    }

    var port: Int { Int(baseURL.split(separator: ":").last ?? "") ?? 0 }

    /// Stops the server (SIGTERM) and waits for it to exit.
    func stop() async {
        process.signal(SIGTERM)
        await process.waitForExit()
    }
}
