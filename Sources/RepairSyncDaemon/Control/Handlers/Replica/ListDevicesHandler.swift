internal import Logging
internal import RepairSyncControlServer
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// Devices; passcodes opened only when asked, and then logged with the caller.
struct ListDevicesHandler: ControlHandler {
    typealias Method = RPC.ListDevices
    let services: ControlServices

    func handle(_ params: RPC.ListDevices.Params, _ request: ControlRequest) async throws -> [Device] {
        let reveal = params.includePasscodes == true
        let devices = try services.engine.replica.devices(
            orderId: params.orderId, status: params.status, page: .init(limit: params.limit, offset: params.offset),
            revealPasscodes: reveal)
        if reveal {
            services.logger.notice(
                "passcodes revealed", metadata: ["uid": "\(request.peer.uid)", "pid": "\(request.peer.pid)"])
        }
        return devices
    }
}
