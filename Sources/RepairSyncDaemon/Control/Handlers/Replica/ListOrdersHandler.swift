internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

struct ListOrdersHandler: ControlHandler {
    typealias Method = RPC.ListOrders
    let services: ControlServices

    func handle(_ params: RPC.ListOrders.Params, _ request: ControlRequest) async throws -> [Order] {
        try services.engine.replica.orders(
            status: params.status, clientId: params.clientId, page: .init(limit: params.limit, offset: params.offset))
    }
}
