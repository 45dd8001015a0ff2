internal import RepairSyncProtocol

struct PingHandler: ControlHandler {
    typealias Method = RPC.Ping

    init(services: ControlServices) {}

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> String { "pong" }
}
