internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

struct ListClientsHandler: ControlHandler {
    typealias Method = RPC.ListClients
    let services: ControlServices

    func handle(_ params: RPC.ListClients.Params, _ request: ControlRequest) async throws -> [Client] {
        try services.engine.replica.clients(
            search: params.search, page: .init(limit: params.limit, offset: params.offset))
    }
}
