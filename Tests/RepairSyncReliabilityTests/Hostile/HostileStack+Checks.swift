import Foundation
import RepairSyncProtocol
import RepairSyncReliability

/// Reads the hostile-server tests make of the daemon's plan and the store's files.
extension HostileStack {
    struct PlannedRun: Sendable, CustomStringConvertible {
        var reason: String
        var at: Date
        var description: String { "\(reason) at \(at) (in \(Int(at.timeIntervalSinceNow)) s)" }
    }

    /// The status's `nextRun` once its reason satisfies `condition` (the scheduler plans after a run's outcome is
    /// posted to it, a moment after the run's report), from the daemon's status notifications until `timeout`; nil
    /// when no status within it planned such a run.
    func nextRun(timeout: TimeInterval = 30, _ condition: @escaping @Sendable (String) -> Bool) async throws
        -> PlannedRun?
    {
        let status = try await daemon.waitForStatus(timeout: timeout) { status in
            guard let reason = status["nextRun"]?["reason"]?.stringValue,
                let text = status["nextRun"]?["at"]?.stringValue,
                Self.timestamp(text) != nil
            else { return false }
            return condition(reason)
        }
        guard let status, let reason = status["nextRun"]?["reason"]?.stringValue,
            let text = status["nextRun"]?["at"]?.stringValue, let at = Self.timestamp(text)
        else { return nil }
        return PlannedRun(reason: reason, at: at)
    }

    /// The runs that ended well so far (`status.metrics.successes`).
    func successes() async throws -> Int { Self.successes(try await daemon.call("status")) }

    @Sendable static func successes(_ status: JSONValue) -> Int { status["metrics"]?["successes"]?.intValue ?? 0 }

    static func timestamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// The write requests the server received for one record (`GET /admin/writes`), oldest first.
    func writes(_ collection: String, _ id: String) async throws -> [ServerWrite] {
        try await admin.writes("/api/v1/\(collection)/\(id)")
    }

    /// The outbox's entries of one record as (seq, state, fields JSON, idempotency key, sent), oldest first.
    func outboxEntries(_ collection: String, _ id: String) throws -> [(
        seq: Int, state: String, fields: String, key: String, sent: Bool
    )] {
        try StoreInspector.strings(
            store,
            """
            SELECT seq || char(9) || state || char(9) || fields || char(9) || idempotency_key || char(9) || sent
            FROM outbox WHERE collection = '\(collection)' AND record_id = '\(id)' ORDER BY seq
            """
        ).map { line in
            let parts = line.components(separatedBy: "\t")
            return (Int(parts[0]) ?? -1, parts[1], parts[2], parts[3], parts[4] == "1")
        }
    }
}

/// What a directory holds, file by file — names, sizes, modification times, modes, inodes and, for regular files,
/// a digest of the contents — to show that a process touched nothing in it.
struct DirectorySnapshot: Equatable, CustomStringConvertible {
    struct File: Equatable {
        var size: Int64
        var modified: Int64
        var mode: UInt32
        var inode: UInt64
        var digest: UInt64?
    }

    var files: [String: File]
    var directoryMode: UInt32

    /// `presenceOnly`: files compared by name alone (SQLite's shared-memory index, which a reader's mapping writes).
    init(_ path: String, presenceOnly: (String) -> Bool = { _ in false }) throws {
        files = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
            var info = stat()
            guard lstat(path + "/" + name, &info) == 0 else { continue }
            if presenceOnly(name) {
                files[name] = File(size: 0, modified: 0, mode: 0, inode: 0, digest: nil)
                continue
            }
            let regular = info.st_mode & S_IFMT == S_IFREG
            files[name] = File(
                size: Int64(info.st_size),
                modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                mode: UInt32(info.st_mode), inode: UInt64(info.st_ino),
                digest: regular ? Self.digest(path + "/" + name) : nil)
        }
        var info = stat()
        _ = stat(path, &info)
        directoryMode = UInt32(info.st_mode)
    }

    /// FNV-1a of the file's bytes.
    private static func digest(_ path: String) -> UInt64? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    var description: String {
        files.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.size) B, mtime \($0.value.modified)" }
            .joined(separator: "; ")
    }
}
