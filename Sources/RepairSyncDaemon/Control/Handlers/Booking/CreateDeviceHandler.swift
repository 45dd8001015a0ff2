internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// A device booked in on an order of the replica: the row and its create in one transaction, durable when this
/// returns (passcode null in the answer, as in every read).
struct CreateDeviceHandler: ControlHandler {
    typealias Method = RPC.CreateDevice
    let services: ControlServices

    func handle(_ params: RPC.CreateDevice.Params, _ request: ControlRequest) async throws -> Device {
        let device = try await BookingRefusal.naming {
            try await services.engine.createDevice(.init(id: params.device.id, fields: params.fields))
        }
        await services.scheduler.localChange()
        return device.withoutPasscode
    }
}
