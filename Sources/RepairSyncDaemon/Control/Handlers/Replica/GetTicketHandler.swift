internal import RepairSyncEngine
internal import RepairSyncProtocol

struct GetTicketHandler: ControlHandler {
    typealias Method = RPC.GetTicket
    let services: ControlServices

    func handle(_ params: RPC.GetTicket.Params, _ request: ControlRequest) async throws -> RPC.GetTicket.Result {
        guard let thread = try services.engine.replica.ticket(id: params.id) else {
            throw JSONRPCError.notFound("no ticket \(params.id) in the replica")
        }
        return RPC.GetTicket.Result(ticket: thread.ticket, messages: thread.messages)
    }
}
