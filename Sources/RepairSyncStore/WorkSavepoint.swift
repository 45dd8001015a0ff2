internal import GRDB

/// One work of a group commit in a savepoint of its own, with statements prepared once per connection.
///
/// What GRDB's `Database.inSavepoint` does inside a transaction — `SAVEPOINT`, the work, then `RELEASE`, or
/// `ROLLBACK TO` and `RELEASE` if it throws — but GRDB prepares each of those statements anew every time, and with
/// many writers sharing a commit that was a tenth of the writer's time (two preparations for every queued change).
/// Cached statements keep their savepoint effect, so GRDB's transaction observers see the same savepoints.
///
/// ```swift
/// try WorkSavepoint.run(db) { try insertChange(db) }  // rolled back alone if it throws
/// ```
enum WorkSavepoint {
    /// Runs `work` in a savepoint of the current transaction: its changes are kept if it returns and undone if it
    /// throws (the error is rethrown). In a transaction SQLite has already rolled back (a full disk, an I/O error in an
    /// earlier work) the work is not called: nothing may commit outside the batch's transaction (GRDB refuses any
    /// statement there too; this says why before the work starts).
    static func run<T>(_ db: Database, _ work: () throws -> T) throws -> T {
        guard db.isInsideTransaction else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the group commit's transaction was rolled back")
        }
        try db.cachedStatement(sql: "SAVEPOINT group_commit_work").execute()
        let value: T
        do {
            value = try work()
        } catch {
            // As GRDB does: the first error is the one thrown; a failed rollback (the transaction is gone) adds none.
            try? db.cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT group_commit_work").execute()
            try? db.cachedStatement(sql: "RELEASE SAVEPOINT group_commit_work").execute()
            throw error
        }
        try db.cachedStatement(sql: "RELEASE SAVEPOINT group_commit_work").execute()
        return value
    }
}
