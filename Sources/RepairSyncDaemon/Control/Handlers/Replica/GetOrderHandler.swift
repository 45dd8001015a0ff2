internal import Logging
internal import RepairSyncControlServer
internal import RepairSyncEngine
internal import RepairSyncProtocol

/// An order with its client and devices; passcodes opened only when asked, and then logged with the caller.
struct GetOrderHandler: ControlHandler {
    typealias Method = RPC.GetOrder
    let services: ControlServices

    func handle(_ params: RPC.GetOrder.Params, _ request: ControlRequest) async throws -> RPC.GetOrder.Result {
        let reveal = params.includePasscodes == true
        guard
            let detail = try services.engine.replica.order(
                id: params.id, number: params.orderNumber, revealPasscodes: reveal)
        else {
            throw JSONRPCError.notFound("no order \(params.id ?? "#\(params.orderNumber ?? 0)") in the replica")
        }
        if reveal {
            services.logger.notice(
                "passcodes revealed",
                metadata: ["order": "\(detail.order.id)", "uid": "\(request.peer.uid)", "pid": "\(request.peer.pid)"])
        }
        return RPC.GetOrder.Result(order: detail.order, client: detail.client, devices: detail.devices)
    }
}
