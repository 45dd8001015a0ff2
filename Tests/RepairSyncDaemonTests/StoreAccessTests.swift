import Foundation
import Logging
import RepairSyncTestSupport
import Testing

@testable import RepairSyncDaemon

/// The store's directory gets the store's mode only when it is the store's own.
@Suite("Store access")
struct StoreAccessTests {
    static func mode(_ path: String) throws -> Int {
        ((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test(
        "a directory the store shares (store.path in / or /var/lib) keeps its mode; one made for it, or holding only its files, gets 0700"
    )
    func onlyTheStoresOwnDirectory() throws {
        let root = try TemporaryDirectory(prefix: "store-access")
        let access = StoreAccess(
            DaemonConfiguration.Store(path: "", groupReadable: false, groupWritable: false), group: nil)
        let logger = Logger(label: "test.store-access")

        let shared = root.path("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        try Data("another program's".utf8).write(to: URL(fileURLWithPath: shared + "/other.conf"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: shared)
        try access.prepareDirectory(for: shared + "/replica.sqlite", logger: logger)
        #expect(try Self.mode(shared) == 0o755, "a shared directory is left as it is")

        let made = root.path("made/state")
        try access.prepareDirectory(for: made + "/replica.sqlite", logger: logger)
        #expect(try Self.mode(made) == 0o700)

        let own = root.path("own")
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
        for name in ["replica.sqlite", "replica.sqlite-wal", "replica.sqlite.lock"] {
            try Data().write(to: URL(fileURLWithPath: own + "/" + name))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: own)
        try access.prepareDirectory(for: own + "/replica.sqlite", logger: logger)
        #expect(try Self.mode(own) == 0o700, "holding only the store's files, it is the store's")
    }
}
