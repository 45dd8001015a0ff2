internal import GRDB
public import RepairSyncModels

/// A health check of a replica file: schema, integrity, a write that is rolled back, and what the file holds.
public struct StoreSelfCheck: Sendable {
    public var path: String
    public var migrations: [String]
    public var integrityProblems: [String]
    public var roundTripOK: Bool
    public var counts: [SyncCollection: Int]

    public var isHealthy: Bool { integrityProblems.isEmpty && roundTripOK }

    /// Opens (creating if needed) the store at `path` and checks it. Writes nothing that stays.
    public static func run(path: String) throws -> StoreSelfCheck {
        let store = try ReplicaStore.open(at: path)
        let migrations = try store.appliedMigrations()
        let problems = try store.integrityProblems()
        let probe = Order(
            id: "self-check-\(Timestamp.now().millisecondsSince1970)", orderNumber: -1, status: .bookedIn,
            total: Money(exactly: "0.3"), clientId: "self-check", createdAt: .now(), updatedAt: .now(), version: 0)
        // Write the probe inside a savepoint that is always rolled back: the check leaves the file as it was.
        let roundTripOK = try store.write { db -> Bool in
            var same = false
            try db.inSavepoint {
                try probe.upsert(db, syncedAt: nil)
                same = try Order.fetchOne(db, key: probe.id) == probe
                return .rollback
            }
            return same
        }
        let counts = try store.read { db in
            try Dictionary(
                uniqueKeysWithValues: SyncCollection.allCases.map { collection in
                    (collection, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(collection.name)") ?? 0)
                })
        }
        return StoreSelfCheck(
            path: path, migrations: migrations, integrityProblems: problems, roundTripOK: roundTripOK,
            counts: counts)
    }
}
