internal import RepairSyncEngine
internal import RepairSyncProtocol

/// A dead change given up for good; the engine says -32001 when there is no dead change with that seq.
struct DiscardHandler: ControlHandler {
    typealias Method = RPC.Discard
    let services: ControlServices

    func handle(_ params: RPC.Discard.Params, _ request: ControlRequest) async throws -> OutboxChange {
        OutboxChange(try await services.engine.discard(seq: params.seq))
    }
}
