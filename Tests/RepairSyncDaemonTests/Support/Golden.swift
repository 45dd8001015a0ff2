import Foundation
import Testing

/// Expected outputs kept as files under Tests/RepairSyncDaemonTests/Golden, compared whole. With
/// `REPAIRSYNC_RECORD_GOLDEN=1` the files are written instead, and the test fails so that a recording is never
/// taken for a pass: review the diff, commit, run again.
enum Golden {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Golden")

    static var recording: Bool { ProcessInfo.processInfo.environment["REPAIRSYNC_RECORD_GOLDEN"] == "1" }

    static func check(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = directory.appendingPathComponent(name + ".txt")
        if recording {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try actual.write(to: file, atomically: true, encoding: .utf8)
            Issue.record(
                "recorded \(file.path); run again without REPAIRSYNC_RECORD_GOLDEN", sourceLocation: sourceLocation)
            return
        }
        guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
            Issue.record(
                "no golden file \(file.path); record it with REPAIRSYNC_RECORD_GOLDEN=1", sourceLocation: sourceLocation
            )
            return
        }
        if actual != expected {
            let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
            let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(actualLines, expectedLines).enumerated().first { $0.element.0 != $0.element.1 }
            let difference =
                first.map { "line \($0.offset + 1):\n  expected: \($0.element.1)\n  actual:   \($0.element.0)" }
                ?? "lengths differ (\(expectedLines.count) expected lines, \(actualLines.count) actual)"
            Issue.record("\(name) differs from its golden file, \(difference)", sourceLocation: sourceLocation)
        }
    }
}
