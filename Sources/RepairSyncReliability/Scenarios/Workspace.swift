internal import Foundation

/// A scenario's own directory (server database, daemon store, logs), removed afterwards unless `keep`.
public struct Workspace: Sendable {
    public let path: String

    /// A directory under `REPAIRSYNC_SOAK_DIR`, else under `base`, else under the temporary folder.
    public init(_ name: String, base: String? = nil) throws {
        let base = ProcessInfo.processInfo.environment["REPAIRSYNC_SOAK_DIR"] ?? base ?? NSTemporaryDirectory()
        path = (base as NSString).appendingPathComponent("repairsync-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Runs `body` in a fresh workspace; the workspace goes afterwards, unless the run failed and
    /// `REPAIRSYNC_SOAK_KEEP` is set.
    public static func with(
        _ name: String, base: String? = nil, _ body: (Workspace) async throws -> ScenarioReport
    ) async throws -> ScenarioReport {
        let workspace = try Workspace(name, base: base)
        let keep = ProcessInfo.processInfo.environment["REPAIRSYNC_SOAK_KEEP"] != nil
        do {
            var report = try await body(workspace)
            if keep, !report.passed { report.notes.append("kept: \(workspace.path)") } else { workspace.remove() }
            return report
        } catch {
            if keep {
                throw ScenarioFailure("\(error) (kept: \(workspace.path))")
            }
            workspace.remove()
            throw error
        }
    }
}
