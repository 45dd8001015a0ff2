internal import RepairSyncEngine
internal import RepairSyncProtocol

struct ConflictsHandler: ControlHandler {
    typealias Method = RPC.Conflicts
    let services: ControlServices

    func handle(_ params: RPC.Conflicts.Params, _ request: ControlRequest) async throws -> [ConflictEntry] {
        try services.engine.conflicts(openOnly: params.open ?? false, limit: params.limit ?? 1000).map(
            ConflictEntry.init)
    }
}
