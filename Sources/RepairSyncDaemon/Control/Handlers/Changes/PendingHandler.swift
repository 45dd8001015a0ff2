internal import RepairSyncEngine
internal import RepairSyncProtocol

struct PendingHandler: ControlHandler {
    typealias Method = RPC.Pending
    let services: ControlServices

    func handle(_ params: RPC.Pending.Params, _ request: ControlRequest) async throws -> [OutboxChange] {
        try services.engine.outboxEntries().map(OutboxChange.init).filter {
            params.state == nil || $0.state == params.state
        }
    }
}
