internal import RepairSyncEngine
internal import RepairSyncProtocol

/// Another program wrote the record: queue what differs. The answer carries the outbox counts its commit read and
/// the status shows (`queueChange` returns once they are shown), so it costs no count query of its own.
struct QueueChangeHandler: ControlHandler {
    typealias Method = RPC.QueueChange
    let services: ControlServices

    func handle(_ params: RPC.QueueChange.Params, _ request: ControlRequest) async throws -> RPC.QueueChange.Result {
        let engine = services.engine
        let result = try await engine.queueChange(params.kind, id: params.id)
        await services.scheduler.localChange()
        let status = await engine.status
        let pending = status.pending + status.failed + status.held
        switch result {
        case .queued(let seq, let fields):
            return RPC.QueueChange.Result(queued: true, outcome: .queued, seq: seq, fields: fields, pending: pending)
        case .alreadyQueued(let seq, let fields):
            return RPC.QueueChange.Result(
                queued: true, outcome: .alreadyQueued, seq: seq, fields: fields, reason: "already queued",
                pending: pending)
        case .nothingChanged(.onServer, let reason):
            return RPC.QueueChange.Result(queued: false, outcome: .onServer, reason: reason, pending: pending)
        case .nothingChanged(.dead(let seq), let reason):
            return RPC.QueueChange.Result(queued: false, outcome: .dead, seq: seq, reason: reason, pending: pending)
        }
    }
}
