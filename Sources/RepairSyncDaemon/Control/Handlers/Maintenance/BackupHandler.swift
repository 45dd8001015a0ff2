internal import Foundation
internal import Logging
internal import RepairSyncControlServer
internal import RepairSyncEngine
internal import RepairSyncProtocol
internal import RepairSyncStore

/// A consistent copy of the store, made next to it and streamed in `backupChunk` notifications, each written
/// before the next is read: the client's pace, nothing buffered. The copy is removed afterwards.
struct BackupHandler: ControlHandler {
    typealias Method = RPC.Backup
    let services: ControlServices

    static let chunkBytes = 256 * 1024

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> RPC.Backup.Result {
        let engine = services.engine
        guard let path = engine.storePath else { throw JSONRPCError.storeError("an in-memory store has no backup") }
        // A daemon killed while it sends one leaves it: the next start removes it (and purge, with the store).
        let copy = ReplicaStore.backupCopyPath(for: path)
        defer {
            for file in [copy, copy + "-journal"] { try? FileManager.default.removeItem(atPath: file) }
        }
        let problems = try await BlockingWork.run { try engine.backup(to: copy) }
        guard problems.isEmpty else {
            throw JSONRPCError.storeError("the backup copy failed its integrity check: \(problems.prefix(3))")
        }
        guard let file = FileHandle(forReadingAtPath: copy) else {
            throw JSONRPCError.storeError("cannot read the backup copy")
        }
        defer { try? file.close() }
        var total: Int64 = 0
        while true {
            let chunk = file.readData(ofLength: Self.chunkBytes)
            if chunk.isEmpty { break }
            total += Int64(chunk.count)
            try await request.stream(RPC.BackupChunk.self, .init(data: chunk.base64EncodedString()))
        }
        services.logger.notice(
            "backup sent", metadata: ["bytes": "\(total)", "uid": "\(request.peer.uid)", "pid": "\(request.peer.pid)"])
        return RPC.Backup.Result(bytes: total, integrity: "ok")
    }
}
