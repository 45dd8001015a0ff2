internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// A run now. Without `wait` the scheduler starts it; with `wait` it runs here and the reply is its report (the
/// scheduler learns how it ended, as for its own runs) — but offline, nothing but the probe talks to the API: it
/// checks now, and the run goes only if it answers.
struct SyncHandler: ControlHandler {
    typealias Method = RPC.Sync
    let services: ControlServices

    func handle(_ params: RPC.Sync.Params, _ request: ControlRequest) async throws -> RPC.Sync.Result {
        let scheduler = services.scheduler
        let collections = params.collections.map(Set.init)
        guard params.wait == true else {
            await scheduler.requestRun(collections)
            return .started
        }
        if !scheduler.snapshot.online {
            await scheduler.probe.check()
            guard scheduler.probe.isOnline else {
                throw JSONRPCError.unavailable(
                    "offline: the API is unreachable; pending changes go out when it is back")
            }
        }
        return .finished(SyncRunReport(await scheduler.runNow(collections)))
    }
}
