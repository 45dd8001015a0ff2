internal import RepairSyncProtocol
internal import RepairSyncEngine

/// The dead changes named (all of them without `ids`) go out again.
struct RetryHandler: ControlHandler {
    typealias Method = RPC.Retry
    let services: ControlServices

    func handle(_ params: RPC.Retry.Params, _ request: ControlRequest) async throws -> RPC.Retry.Result {
        let engine = services.engine
        let targets = try params.ids ?? engine.outboxEntries().filter { $0.state == .dead }.map(\.seq)
        for seq in targets { try await engine.retryDead(seq: seq) }
        if !targets.isEmpty { await services.scheduler.localChange() }
        return RPC.Retry.Result(retried: targets.count)
    }
}
