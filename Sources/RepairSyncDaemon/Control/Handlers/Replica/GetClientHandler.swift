internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

struct GetClientHandler: ControlHandler {
    typealias Method = RPC.GetClient
    let services: ControlServices

    func handle(_ params: RPC.GetClient.Params, _ request: ControlRequest) async throws -> Client {
        guard let client = try services.engine.replica.client(id: params.id) else {
            throw JSONRPCError.notFound("no client \(params.id) in the replica")
        }
        return client
    }
}
