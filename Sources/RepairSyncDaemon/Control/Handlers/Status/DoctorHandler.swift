internal import RepairSyncProtocol

/// The checks only the running daemon can make, with the configuration it runs with.
struct DoctorHandler: ControlHandler {
    typealias Method = RPC.Doctor
    let services: ControlServices

    func handle(_ params: NoParams, _ request: ControlRequest) async throws -> [DoctorCheck] {
        await DaemonChecks(services: services).run()
    }
}
