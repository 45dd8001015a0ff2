internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// An order booked in here with its devices: the rows and their creates in one transaction, durable when this
/// returns. Answered as `getOrder` answers it (passcodes null).
struct CreateOrderHandler: ControlHandler {
    typealias Method = RPC.CreateOrder
    let services: ControlServices

    func handle(_ params: RPC.CreateOrder.Params, _ request: ControlRequest) async throws -> RPC.GetOrder.Result {
        let devices = (params.devices ?? []).map { LocalChanges.NewRecord(id: $0.id, fields: $0.fields) }
        let (order, booked) = try await BookingRefusal.naming {
            try await services.engine.createOrder(.init(id: params.id, fields: params.fields), devices: devices)
        }
        await services.scheduler.localChange()
        let client = try services.engine.replica.client(id: order.clientId)
        return RPC.GetOrder.Result(order: order, client: client, devices: booked.map(\.withoutPasscode))
    }
}

extension Device {
    /// As every read shows it unless passcodes are asked for.
    var withoutPasscode: Device {
        var device = self
        device.passcode = nil
        return device
    }
}
