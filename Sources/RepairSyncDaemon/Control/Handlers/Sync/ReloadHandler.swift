internal import RepairSyncProtocol

/// The whole file is validated again; a bad one is refused naming the key, and the running configuration stays.
struct ReloadHandler: ControlHandler {
    typealias Method = RPC.Reload
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> RPC.Reload.Result {
        switch await services.reload() {
        case .success(let unknown):
            return RPC.Reload.Result(reloaded: true, unknownKeys: unknown)
        case .failure(let error):
            throw JSONRPCError.invalidValue(error.key, "\(error.message) (the running configuration is kept)")
        }
    }
}
