internal import RepairSyncEngine
internal import RepairSyncProtocol

/// The row and its outbox entry in one transaction, durable when this returns.
struct UpdateDeviceHandler: ControlHandler {
    typealias Method = RPC.UpdateDevice
    let services: ControlServices

    func handle(_ params: RPC.UpdateDevice.Params, _ request: ControlRequest) async throws -> OutboxChange {
        let entry = try await services.engine.update(.devices, id: params.id, fields: params.fields)
        await services.scheduler.localChange()
        return OutboxChange(entry)
    }
}
