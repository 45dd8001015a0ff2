internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// A resync: the engine's next run resets the collections before its pull. Without `wait` the scheduler starts
/// that run; with it, it runs here (offline: only after the probe finds the API), as for `sync`.
struct ResyncHandler: ControlHandler {
    typealias Method = RPC.Resync
    let services: ControlServices

    func handle(_ params: RPC.Resync.Params, _ request: ControlRequest) async throws -> RPC.Resync.Result {
        let scheduler = services.scheduler
        let collections = Set(params.collections)
        if params.wait == true, !scheduler.snapshot.online {
            await scheduler.probe.check()
            guard scheduler.probe.isOnline else {
                throw JSONRPCError.unavailable("offline: the API is unreachable; resync when it is back")
            }
        }
        await services.engine.requestResync(collections)
        guard params.wait == true else {
            await scheduler.requestRun(collections)
            return .started
        }
        return .finished(SyncRunReport(await scheduler.runNow(collections)))
    }
}
