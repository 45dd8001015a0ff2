internal import RepairSyncProtocol
internal import RepairSyncEngine

/// `statusChanged` with the current status, then on every change, for as long as the connection stays.
struct SubscribeHandler: ControlHandler {
    typealias Method = RPC.Subscribe
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> Bool {
        let (engine, scheduler) = (services.engine, services.scheduler)
        let updates = await engine.statusUpdates().map { status in
            StatusSnapshot(status, scheduler: scheduler, storeBytes: engine.storeBytes)
        }
        try request.subscribe(RPC.StatusChanged.self, to: updates)
        return true
    }
}
