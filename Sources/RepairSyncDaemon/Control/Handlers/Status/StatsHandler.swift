internal import RepairSyncEngine
internal import RepairSyncProtocol

struct StatsHandler: ControlHandler {
    typealias Method = RPC.Stats
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> StatsReport {
        services.metrics.stats(status: await services.engine.status, responses: services.engine.responseCounts)
    }
}
