internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

struct ListTicketsHandler: ControlHandler {
    typealias Method = RPC.ListTickets
    let services: ControlServices

    func handle(_ params: RPC.ListTickets.Params, _ request: ControlRequest) async throws -> [Ticket] {
        try services.engine.replica.tickets(
            status: params.status, page: .init(limit: params.limit, offset: params.offset))
    }
}
