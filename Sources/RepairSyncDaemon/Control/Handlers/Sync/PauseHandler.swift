internal import RepairSyncProtocol

struct PauseHandler: ControlHandler {
    typealias Method = RPC.Pause
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> RPC.PauseState {
        await services.scheduler.setPaused(true)
        return RPC.PauseState(paused: services.scheduler.snapshot.paused)
    }
}
