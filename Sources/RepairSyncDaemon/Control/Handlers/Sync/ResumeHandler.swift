internal import RepairSyncProtocol

struct ResumeHandler: ControlHandler {
    typealias Method = RPC.Resume
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> RPC.PauseState {
        await services.scheduler.setPaused(false)
        return RPC.PauseState(paused: services.scheduler.snapshot.paused)
    }
}
