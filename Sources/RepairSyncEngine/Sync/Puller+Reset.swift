internal import GRDB
internal import RepairSyncModels
internal import RepairSyncStore

/// `resync`: an admin who suspects a collection drifted has it pulled again from the beginning, without purging the
/// store. The reset is the start of issue 11's mark-and-sweep: in one transaction the cursor is forgotten and every
/// record the collection holds is marked; the pull that follows returns everything the server has, and whatever it
/// does not return is checked against the record's own endpoint before it goes. Pending changes stay in the outbox,
/// and the records they need stay with them (a record created here and not yet on the server is never swept).
extension Puller {
    /// Forgets `collection`'s cursor and marks its records, in one transaction; returns how many were marked. Run
    /// inside a run, before its pull, so no page of an earlier run can commit a cursor over the reset.
    func reset(_ collection: SyncCollection) async throws(SyncStop) -> Int {
        do {
            return try await store.write { db in
                try db.execute(
                    sql:
                        "INSERT OR IGNORE INTO resync_marks (collection, record_id) SELECT ?, id FROM \(collection.name)",
                    arguments: [collection.name])
                let marked = db.changesCount
                try db.execute(
                    sql: "UPDATE sync_metadata SET cursor = NULL, state = 'initial' WHERE collection = ?",
                    arguments: [collection.name])
                return marked
            }
        } catch {
            throw .failed("\(collection): store: \(error)")
        }
    }
}
