import Foundation
import GRDB
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// `purge` removes the store's files (`ReplicaStore.removeFiles`), wherever they are.
@Suite struct StoreRemovalTests {
    /// A temporary directory whose `replica.sqlite` is a symbolic link to `data/replica.sqlite` (not made yet), as
    /// an admin puts the store on a bigger disk.
    static func linkedStorePath() throws -> (TemporaryDirectory, elsewhere: String, target: String, link: String) {
        let dir = try TemporaryDirectory()
        let elsewhere = dir.path("data")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let target = elsewhere + "/replica.sqlite"
        let link = dir.path("replica.sqlite")
        #expect(symlink(target, link) == 0)
        return (dir, elsewhere, target, link)
    }

    @Test("a store reached through a symbolic link: its files at the target go, then the link — none of it stays")
    func symbolicLinkedStore() throws {
        let (dir, elsewhere, target, link) = try Self.linkedStorePath()
        defer { withExtendedLifetime(dir) {} }

        let store = try ReplicaStore.open(at: link)
        try store.write { db in
            try db.execute(sql: "INSERT INTO resync_marks (collection, record_id) VALUES ('orders', 'ord_1')")
        }
        #expect(FileManager.default.fileExists(atPath: target), "the database lives at the link's target")
        try store.close()

        let removed = ReplicaStore.removeFiles(at: link)
        #expect(removed.contains(target) && removed.contains(link), "\(removed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty, "left at the target")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil, "the link stays")
    }

    @Test(
        "store.path naming another program's database: refused, naming it, and the file left as it was — not turned to WAL, no table added"
    )
    func foreignDatabaseIsLeftAlone() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("till.sqlite")
        do {
            let till = try DatabaseQueue(path: path)
            try till.write { db in
                try db.execute(sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
                try db.execute(sql: "INSERT INTO customers (name) VALUES ('Ada')")
            }
            try till.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { _ = try ReplicaStore.open(at: path) }
        do {
            _ = try ReplicaStore.open(at: path)
        } catch let error as StoreError {
            #expect(
                error.isForeign && "\(error)".contains("customers") && "\(error)".contains("store.path"), "\(error)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the file was changed")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test(
        "a damaged store reached through a symbolic link is kept aside at the link's target, the link stays, and the fresh store is made there"
    )
    func damagedLinkedStoreKeptAsideAtItsTarget() throws {
        let (dir, _, target, link) = try Self.linkedStorePath()
        defer { withExtendedLifetime(dir) {} }
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: target))

        let kept = try ReplicaStore.keepAside(at: link)
        #expect(kept.hasPrefix(target + ".corrupt-"), "\(kept)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target, "the link was moved")
        let store = try ReplicaStore.open(at: link)
        try store.close()
        #expect(FileManager.default.fileExists(atPath: target), "the fresh store is not where the link leads")
        #expect(ReplicaStore.keptAside(beside: link).map(\.path) == [kept])
    }
}
