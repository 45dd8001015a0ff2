internal import RepairSyncEngine
internal import RepairSyncProtocol

/// The dead changes named (all of them without `ids`) go out again. A change dead because a create it waits for is
/// dead goes out with that create (retrying either revives both).
struct RetryHandler: ControlHandler {
    typealias Method = RPC.Retry
    let services: ControlServices

    func handle(_ params: RPC.Retry.Params, _ request: ControlRequest) async throws -> RPC.Retry.Result {
        let engine = services.engine
        let deadBefore = try engine.outboxEntries().filter { $0.state == .dead }.map(\.seq)
        let targets = params.ids ?? deadBefore
        for seq in targets {
            do {
                try await engine.retryDead(seq: seq)
            } catch EngineError.notFound where deadBefore.contains(seq) {
                // Dead only because a create it waited for was dead: that create's retry brought it back already.
                continue
            }
        }
        if !targets.isEmpty { await services.scheduler.localChange() }
        return RPC.Retry.Result(retried: targets.count)
    }
}
