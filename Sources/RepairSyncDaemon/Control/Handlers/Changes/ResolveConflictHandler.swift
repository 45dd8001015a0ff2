internal import RepairSyncEngine
internal import RepairSyncProtocol

struct ResolveConflictHandler: ControlHandler {
    typealias Method = RPC.ResolveConflict
    let services: ControlServices

    func handle(_ params: RPC.ResolveConflict.Params, _ request: ControlRequest) async throws
        -> RPC.ResolveConflict.Result
    {
        let decision: ConflictDecision =
            switch params.keep {
            case .keepLocal: .keepLocal
            case .keepRemote: .keepRemote
            case .perField(let choices): .perField(choices.mapValues { $0 == .local })
            }
        try await services.engine.resolveConflict(id: params.id, decision)
        await services.scheduler.localChange()
        return RPC.ResolveConflict.Result(resolved: true)
    }
}
