internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProtocol

/// The snapshot the last full sync took, and how old it is.
struct DashboardStatsHandler: ControlHandler {
    typealias Method = RPC.DashboardStats
    let services: ControlServices

    func handle(_ params: RPC.DashboardStats.Params, _ request: ControlRequest) async throws
        -> RPC.DashboardStats.Result
    {
        let period = params.period ?? .today
        guard let snapshot = try services.engine.replica.dashboard(period: period.rawValue) else {
            throw JSONRPCError.notFound(
                "no dashboard snapshot for \(period.rawValue) yet: it is taken by the next full sync")
        }
        let age = max(0, (Timestamp.now().millisecondsSince1970 - snapshot.fetchedAt.millisecondsSince1970) / 1000)
        return RPC.DashboardStats.Result(
            period: period, stats: snapshot.stats, fetchedAt: snapshot.fetchedAt, ageSeconds: age)
    }
}
