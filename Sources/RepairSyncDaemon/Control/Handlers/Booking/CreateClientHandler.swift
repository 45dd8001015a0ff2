internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// A client booked in here: the row and its create in one transaction, durable when this returns.
struct CreateClientHandler: ControlHandler {
    typealias Method = RPC.CreateClient
    let services: ControlServices

    func handle(_ params: RPC.CreateClient.Params, _ request: ControlRequest) async throws -> Client {
        let client = try await BookingRefusal.naming {
            try await services.engine.createClient(.init(id: params.id, fields: params.fields))
        }
        await services.scheduler.localChange()
        return client
    }
}
