import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairSyncControlClient
import RepairSyncProcesses
import RepairSyncProtocol
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// docs/integration.md's examples, run as its reader would: as a user who is not root but is in the socket's group,
/// against a daemon with `store.group_writable`, while that daemon syncs.
@Suite("Integration examples", .serialized, .timeLimit(.minutes(3)))
struct IntegrationExamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The group the tool's user belongs to (Debian's `users`), and that user (`nobody`, in no group of its own).
    static let group = "users"
    static let uid: UInt32 = 65534

    @Test("shop_tool.py and shop-tool.sh read the replica and change it both ways, as a group member, during a sync")
    func examples() async throws {
        let tools = ["/usr/bin/setpriv", "/usr/bin/python3", "/usr/bin/sqlite3"]
        guard geteuid() == 0, tools.allSatisfy(FileManager.default.isExecutableFile(atPath:)), let entry = getgrnam(Self.group)
        else {
            print("skipping: running the examples as another user needs root, \(tools.joined(separator: ", ")) and the group \(Self.group)")
            try Test.cancel("needs root, setpriv, python3, sqlite3 and the group \(Self.group)")
        }
        let gid = entry.pointee.gr_gid
        try await DaemonHarness.with(orders: 200) { h in
            h.environment = ["REPAIRSYNCD_CONTROL_GROUP": Self.group, "REPAIRSYNCD_STORE_GROUP_WRITABLE": "true"]
            // The tool's user must be able to pass through the temporary directory to the store and the socket.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: h.directory.url.path)
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))

            // What group_writable promises: the directory setgid and the group's, the files 0660 and the group's.
            for (path, mode) in [
                ((h.storePath as NSString).deletingLastPathComponent, 0o2770), (h.storePath, 0o660),
                (h.storePath + "-wal", 0o660), (h.storePath + "-shm", 0o660),
            ] {
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                let actual = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
                #expect(actual & 0o7777 == mode, "\(path): \(String(actual, radix: 8))")
                #expect((attributes[.groupOwnerAccountID] as? NSNumber)?.uint32Value == gid, "\(path) belongs to the group")
            }

            // Every request slow and a resync from scratch: the examples run while the daemon writes pages.
            _ = try await h.backend.send(.POST, "/admin/cursors/expire")
            _ = try await h.backend.send(.PUT, "/admin/faults", json: #"{"rate":1,"kinds":{"slow":1},"slow_ms":100}"#)
            let watcher = try StatusWatcher(path: h.socketPath)
            _ = try await h.call("sync")
            #expect(await watcher.wait(timeout: 10) { $0["state"] == .string("syncing") } != nil)

            let python = try await Self.run(
                ["/usr/bin/python3", Self.root.appendingPathComponent("docs/examples/shop_tool.py").path, "1003", "tkt_3"],
                gid: gid, h)
            let duringPython = try await h.call("status")["state"]
            let shell = try await Self.run(
                ["/bin/sh", Self.root.appendingPathComponent("docs/examples/shop-tool.sh").path, "1004", "tkt_4"], gid: gid, h)
            #expect(python.status == 0, "shop_tool.py: \(python.output)")
            #expect(shell.status == 0, "shop-tool.sh: \(shell.output)")
            #expect(duringPython == .string("syncing"), "the sync was still running when the Python example ended")
            #expect(python.output.contains("queueChange order-updated: queued status"), "\(python.output)")
            #expect(shell.output.contains("queued device-updated"), "\(shell.output)")

            // Everything reaches the server, once.
            _ = try await h.backend.send(.DELETE, "/admin/faults")
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            #expect(try await h.call("pending") == .array([]))
            let order3 = try await h.backend.get("/api/v1/orders/ord_3").object()
            #expect(order3["notes"] as? String == "Screen replaced; ready Friday")
            #expect(order3["status"] as? String == "ready")
            let order4 = try await h.backend.get("/api/v1/orders/ord_4").object()
            #expect(order4["notes"] as? String == "Parts ordered (shop-tool.sh)")
            let messages3 = try await Self.messages(of: "tkt_3", h)
            #expect(messages3.filter { $0 == "Your repair is ready." }.count == 1, "the repeated reply is one message: \(messages3)")
            #expect(messages3.contains("Called the customer (shop_tool.py)."))
            let messages4 = try await Self.messages(of: "tkt_4", h)
            #expect(messages4.contains("We have ordered the part.") && messages4.contains("Part ordered (shop-tool.sh)."))
            let device = try await h.call("listDevices", .object(["orderId": .string("ord_4")]))
            if case .array(let devices) = device, let first = devices.first?["id"]?.stringValue {
                let remote = try await h.backend.get("/api/v1/devices/\(first)").object()
                #expect(remote["resolution"] as? String == "Part ordered")
            }
            #expect(h.log().contains("uid=\(Self.uid)"), "the changes were made by the tool's user")
        }
    }

    /// The contents of a ticket's messages on the server.
    static func messages(of ticket: String, _ h: DaemonHarness) async throws -> [String] {
        var contents: [String] = []
        var cursor: String?
        repeat {
            let page = try await h.backend.get("/api/v1/ticket_messages/changes?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? "")).object()
            let records = page["data"] as? [[String: Any]] ?? []
            contents += records.filter { $0["ticket_id"] as? String == ticket }.compactMap { $0["content"] as? String }
            cursor = page["has_more"] as? Bool == true ? page["next_cursor"] as? String : nil
        } while cursor != nil
        return contents
    }

    /// Runs `arguments` as `uid` with `gid` as its group and no other, with the daemon's paths and repairctl on PATH.
    static func run(_ arguments: [String], gid: UInt32, _ h: DaemonHarness) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(
            ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] + arguments,
            environment: [
                "PATH": DaemonHarness.binaries.path + ":/usr/bin:/bin", "REPAIRSYNCD_STORE": h.storePath,
                "REPAIRSYNCD_SOCKET": h.socketPath, "HOME": "/nonexistent", "LANG": "C.UTF-8",
            ], mergeErrors: true)
    }
}
