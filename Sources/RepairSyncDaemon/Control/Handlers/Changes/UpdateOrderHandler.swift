internal import RepairSyncEngine
internal import RepairSyncProtocol

/// The row and its outbox entry in one transaction, durable when this returns.
struct UpdateOrderHandler: ControlHandler {
    typealias Method = RPC.UpdateOrder
    let services: ControlServices

    func handle(_ params: RPC.UpdateOrder.Params, _ request: ControlRequest) async throws -> OutboxChange {
        let entry = try await services.engine.update(.orders, id: params.id, fields: params.fields)
        await services.scheduler.localChange()
        return OutboxChange(entry)
    }
}
