internal import RepairSyncEngine
internal import RepairSyncProtocol

extension ReplicaReader.Page {
    /// The list methods' `limit` (default 100) and `offset` (default 0), already validated.
    init(limit: Int?, offset: Int?) {
        self.init(limit: limit ?? Paging.defaultLimit, offset: offset ?? 0)
    }
}
