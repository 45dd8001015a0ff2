internal import GRDB
internal import RepairSyncModels

/// What the `skip_records` defect needs of the store.
extension BackendStore {
    /// The feed position of the first entry (record or tombstone) after `sequence` in the collection's feed; nil when
    /// there is none.
    func sequence(after sequence: Int64, in collection: SyncCollection) async throws -> Int64? {
        try await pool.read { db in
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT MIN(seq) FROM (
                        SELECT seq FROM records WHERE collection = ?1 AND seq > ?2
                        UNION ALL
                        SELECT seq FROM tombstones WHERE collection = ?1 AND seq > ?2)
                    """,
                arguments: [collection.name, sequence])
        }
    }
}
