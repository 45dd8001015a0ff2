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
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The group the tool's user belongs to (Debian's `users`), and that user (`nobody`, in no group of its own).
    static let group = "users"
    static let uid: UInt32 = 65534

    @Test(
        "shop_tool.py and shop-tool.sh read the replica, change it and book in both ways, as a group member, during a sync"
    )
    func examples() async throws {
        let tools = ["/usr/bin/setpriv", "/usr/bin/python3", "/usr/bin/sqlite3"]
        guard geteuid() == 0, tools.allSatisfy(FileManager.default.isExecutableFile(atPath:)),
            let entry = getgrnam(Self.group)
        else {
            print(
                "skipping: running the examples as another user needs root, \(tools.joined(separator: ", ")) and the group \(Self.group)"
            )
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
                #expect(
                    (attributes[.groupOwnerAccountID] as? NSNumber)?.uint32Value == gid, "\(path) belongs to the group")
            }

            // Every request slow and a resync from scratch: the examples run while the daemon writes pages.
            _ = try await h.backend.send(.POST, "/admin/cursors/expire")
            _ = try await h.backend.send(.PUT, "/admin/faults", json: #"{"rate":1,"kinds":{"slow":1},"slow_ms":500}"#)
            let watcher = try StatusWatcher(path: h.socketPath)
            _ = try await h.call("sync")
            #expect(await watcher.wait(timeout: 10) { $0["state"] == .string("syncing") } != nil)

            let python = try await Self.run(
                [
                    "/usr/bin/python3", Self.root.appendingPathComponent("docs/examples/shop_tool.py").path, "1003",
                    "tkt_3",
                ],
                gid: gid, h)
            let duringPython = try await h.call("status")["state"]
            let shell = try await Self.run(
                ["/bin/sh", Self.root.appendingPathComponent("docs/examples/shop-tool.sh").path, "1004", "tkt_4"],
                gid: gid, h)
            #expect(python.status == 0, "shop_tool.py: \(python.output)")
            #expect(shell.status == 0, "shop-tool.sh: \(shell.output)")
            #expect(duringPython == .string("syncing"), "the sync was still running when the Python example ended")
            #expect(python.output.contains("queueChange order-updated: queued status"), "\(python.output)")
            #expect(shell.output.contains("queued device-updated"), "\(shell.output)")
            #expect(python.output.contains("queueChange order-created: queued"), "\(python.output)")
            #expect(shell.output.contains("queued device-created"), "\(shell.output)")

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
            try await Self.expectBookingsOnServer(h)
            #expect(
                messages3.filter { $0 == "Your repair is ready." }.count == 1,
                "the repeated reply is one message: \(messages3)")
            #expect(messages3.contains("Called the customer (shop_tool.py)."))
            let messages4 = try await Self.messages(of: "tkt_4", h)
            #expect(
                messages4.contains("We have ordered the part.") && messages4.contains("Part ordered (shop-tool.sh)."))
            let device = try await h.call("listDevices", .object(["orderId": .string("ord_4")]))
            // The device the shell example edited: the order's first by (created_at, id), as it chose it (the one it
            // added later is the newest).
            let key = { (device: JSONValue) in
                (device["created_at"]?.stringValue ?? "", device["id"]?.stringValue ?? "")
            }
            if case .array(let devices) = device, let first = devices.min(by: { key($0) < key($1) })?["id"]?.stringValue
            {
                let remote = try await h.backend.get("/api/v1/devices/\(first)").object()
                #expect(remote["resolution"] as? String == "Part ordered")
            }
            #expect(h.log().contains("uid=\(Self.uid)"), "the changes were made by the tool's user")
        }
    }

    /// What the examples booked in is on the server exactly once, under its parent: through the socket (Python's
    /// `createOrder`, called twice with one id; the shell's `repairctl order new`) and as rows inserted, then queued
    /// (Python's client and order, the shell's device).
    static func expectBookingsOnServer(_ h: DaemonHarness) async throws {
        let (clients, orders, devices) = (
            try await records("clients", h), try await records("orders", h), try await records("devices", h)
        )
        func only(_ records: [[String: Any]], _ key: String, _ value: String) -> [String: Any]? {
            let matching = records.filter { $0[key] as? String == value }
            #expect(matching.count == 1, "one record with \(key) \(value) on the server, not \(matching.count)")
            return matching.count == 1 ? matching[0] : nil
        }
        for (notes, client, model) in [
            ("Booked in by shop_tool.py", "ord_3", "iPhone 13"), ("Booked in by shop-tool.sh", "ord_4", nil),
        ] {
            let localClient = try await h.call("getOrder", .object(["id": .string(client)]))["order"]?["client_id"]?
                .stringValue
            guard let order = only(orders, "notes", notes), let id = order["id"] as? String else { continue }
            #expect(order["client_id"] as? String == localClient, "\(notes): booked for the client of \(client)")
            #expect(order["order_number"] as? Int != nil, "\(notes): the server gave it a number")
            let booked = devices.filter { $0["order_id"] as? String == id }
            #expect(booked.count == 1, "\(notes): its one device, once: \(booked)")
            if let model { #expect(booked.first?["model"] as? String == model) }
        }
        if let client = only(clients, "email", "walk-in.python@example.com"),
            let order = only(orders, "notes", "Walk-in, booked in by shop_tool.py")
        {
            #expect(
                order["client_id"] as? String == client["id"] as? String, "the inserted order is its inserted client's")
        }
        let added = only(devices, "issue", "Added by shop-tool.sh")
        #expect(added?["order_id"] as? String == "ord_4", "the inserted device is on the order the shell example read")
    }

    /// The contents of a ticket's messages on the server.
    static func messages(of ticket: String, _ h: DaemonHarness) async throws -> [String] {
        try await records("ticket_messages", h).filter { $0["ticket_id"] as? String == ticket }.compactMap {
            $0["content"] as? String
        }
    }

    /// Every record of a collection on the server, from its change feed (tombstones left out).
    static func records(_ collection: String, _ h: DaemonHarness) async throws -> [[String: Any]] {
        var records: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try await h.backend.get(
                "/api/v1/\(collection)/changes?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? "")
            ).object()
            records += page["data"] as? [[String: Any]] ?? []
            cursor = page["has_more"] as? Bool == true ? page["next_cursor"] as? String : nil
        } while cursor != nil
        return records
    }

    /// Runs `arguments` as `uid` with `gid` as its group and no other, with the daemon's paths and repairctl on PATH.
    static func run(_ arguments: [String], gid: UInt32, _ h: DaemonHarness) async throws -> (
        status: Int32, output: String
    ) {
        try await ChildProcess.run(
            ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] + arguments,
            environment: [
                "PATH": DaemonHarness.binaries.path + ":/usr/bin:/bin", "REPAIRSYNCD_STORE": h.storePath,
                "REPAIRSYNCD_SOCKET": h.socketPath, "HOME": "/nonexistent", "LANG": "C.UTF-8",
            ], mergeErrors: true)
    }
}
