internal import Foundation

/// `repair-api-dev` as a separate process with its admin surface, on its own database file, so a scenario can stop
/// it and start it again on the same port and data.
public final class APIServerProcess: @unchecked Sendable {
    public static let token = "soak-token"

    public let process: ChildProcess
    public let baseURL: String
    public let admin: AdminAPI
    public var port: Int { Int(baseURL.split(separator: ":").last ?? "") ?? 0 }

    /// Starts the server (seeding `orders` orders into an empty database) and waits for `listening on URL`;
    /// `launcher` prefixes the command (e.g. `ip netns exec NAME`).
    public init(
        database: String, orders: Int, port: Int = 0, logPath: String, extra: [String] = [], launcher: [String] = []
    ) async throws {
        let arguments =
            launcher + [
                Binaries.path("repair-api-dev"), "--db", database, "--port", "\(port)", "--token", Self.token,
                "--admin",
                "--quiet", "--seed", "--orders", "\(orders)",
            ] + extra
        process = try ChildProcess(
            arguments, environment: ProcessInfo.processInfo.environment, logPath: logPath, pipeOutput: true)
        guard let line = await process.readLine(startingWith: "listening on ") else {
            await process.killNow()
            throw ScenarioFailure("repair-api-dev did not start: \(process.log().suffix(500))")
        }
        baseURL = String(line.dropFirst("listening on ".count))
        admin = AdminAPI(baseURL: baseURL, token: Self.token)
    }

    /// SIGTERM, and wait for the exit.
    public func stop() async {
        process.signal(SIGTERM)
        await process.waitForExit()
    }
}
