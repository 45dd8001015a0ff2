internal import RepairSyncEngine
internal import RepairSyncProtocol

struct StatusHandler: ControlHandler {
    typealias Method = RPC.Status
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> StatusSnapshot {
        let engine = services.engine
        return StatusSnapshot(await engine.status, scheduler: services.scheduler, storeBytes: engine.storeBytes)
    }
}
