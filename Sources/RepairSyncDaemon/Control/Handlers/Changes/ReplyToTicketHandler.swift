internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// A new message, written and queued. With the caller's `id`, a repeated call (its reply lost) answers the message
/// already written; the same id with other content is refused by the engine (-32002 on `id`).
struct ReplyToTicketHandler: ControlHandler {
    typealias Method = RPC.ReplyToTicket
    let services: ControlServices

    func handle(_ params: RPC.ReplyToTicket.Params, _ request: ControlRequest) async throws -> TicketMessage {
        let message = try await services.engine.createTicketMessage(
            ticketId: params.ticketId, content: params.content, isInternal: params.internal ?? false, id: params.id)
        await services.scheduler.localChange()
        return message
    }
}
