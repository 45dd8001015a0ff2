internal import RepairSyncModels
internal import RepairSyncProtocol

struct VersionHandler: ControlHandler {
    typealias Method = RPC.Version

    init(services: ControlServices) {}

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> RPC.Version.Result {
        RPC.Version.Result(version: ProductInfo.version, protocolVersion: RPC.protocolVersion)
    }
}
