internal import Logging
internal import RepairSyncControlServer
internal import RepairSyncEngine
internal import RepairSyncProtocol

/// Wipes the replica, refusing while changes are not on the server unless forced; the daemon has nothing left to
/// serve afterwards and stops once the reply is out (exit 0, not restarted).
struct PurgeHandler: ControlHandler {
    typealias Method = RPC.Purge
    let services: ControlServices

    func handle(_ params: RPC.Purge.Params, _ request: ControlRequest) async throws -> RPC.Purge.Result {
        let shutdown = services.shutdown
        let removed: [String]
        let pending: Int
        do {
            (removed, pending) = try await services.engine.purge(force: params.force == true)
        } catch {
            // Past the count, writing has ended for good: a daemon left running could only refuse every write.
            if services.engine.isClosing { request.afterReply { await shutdown() } }
            throw error
        }
        services.logger.notice(
            "store purged; the daemon stops",
            metadata: [
                "removed": "\(removed)", "discarded_changes": "\(pending)", "uid": "\(request.peer.uid)",
                "pid": "\(request.peer.pid)",
            ])
        request.afterReply { await shutdown() }
        return RPC.Purge.Result(removed: removed, discardedChanges: pending, stopping: true)
    }
}
