import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `repairsyncd` and `repairctl` as built binaries, against repair-api-dev on loopback.
@Suite("Daemon end to end", .serialized, .timeLimit(.minutes(3)))
struct DaemonEndToEndTests {
    @Test("starts, says READY, syncs, and answers every method of the socket")
    func methods() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            // The executable serves its tasks on its event loops (TaskPlacement), which every call below runs on.
            #expect(h.log().contains("tasks_on=event_loops"), "\(h.log())")
            let report = try await h.call("sync", .object(["wait": .bool(true)]))
            #expect(report["stop"] == nil, "\(report.serialized)")
            let server = try await h.backend.get("/admin/counters").object()["records"] as? [String: Int] ?? [:]
            let status = try await h.call("status")
            guard case .array(let collections)? = status["collections"] else {
                Issue.record("no collections")
                return
            }
            for collection in collections {
                #expect(collection["records"]?.intValue == server[collection["collection"]?.stringValue ?? ""])
            }
            #expect(try await h.call("ping") == .string("pong"))
            #expect(try await h.call("version")["protocol"] == .number(RPC.protocolVersion))

            let update = try await h.call(
                "updateOrder", .object(["id": .string("ord_2"), "notes": .string("socket note")]))
            #expect(update["state"] == .string("pending"))
            _ = try await h.call(
                "updateDevice", .object(["id": .string("dev_2"), "diagnosis": .string("socket diagnosis")]))
            let message = try await h.call(
                "replyToTicket", .object(["ticketId": .string("tkt_2"), "content": .string("socket reply")]))
            #expect(message["ticket_id"] == .string("tkt_2"))
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            let pending = try await h.call("pending")
            #expect(pending == .array([]))
            let order = try await h.backend.get("/api/v1/orders/ord_2").object()
            #expect(order["notes"] as? String == "socket note")

            let queued = try await h.call(
                "queueChange", .object(["kind": .string("order-updated"), "id": .string("ord_2")]))
            #expect(queued["queued"] == .bool(false))
            #expect(queued["outcome"] == .string("on_server"), "\(queued)")

            let shown = try await h.call("getOrder", .object(["orderNumber": .number(1002)]))
            #expect(shown["order"]?["id"] == .string("ord_2"))
            if case .array(let devices)? = shown["devices"] {
                #expect(devices.allSatisfy { $0["passcode"] == .null }, "passcodes never leave the replica")
            }
            guard case .array(let orders) = try await h.call("listOrders", .object(["limit": .number(5)])) else {
                Issue.record("listOrders")
                return
            }
            #expect(orders.count == 5)
            guard case .array = try await h.call("listDevices", .object(["orderId": .string("ord_2")])) else {
                Issue.record("listDevices")
                return
            }
            guard case .array(let clients) = try await h.call("listClients", .object(["search": .string("a")])) else {
                Issue.record("listClients")
                return
            }
            #expect(!clients.isEmpty)
            #expect(try await h.call("getClient", .object(["id": .string("cli_1")]))["id"] == .string("cli_1"))
            guard case .array = try await h.call("listTickets") else {
                Issue.record("listTickets")
                return
            }
            let ticket = try await h.call("getTicket", .object(["id": .string("tkt_2")]))
            guard case .array(let messages)? = ticket["messages"] else {
                Issue.record("getTicket")
                return
            }
            #expect(messages.contains { $0["content"] == .string("socket reply") })
            #expect(
                try await h.call("dashboardStats", .object(["period": .string("week")]))["period"] == .string("week"))
            #expect(try await h.call("conflicts") == .array([]))
            #expect(try await h.call("retry")["retried"] == .number(0))
            #expect(try await h.call("pause")["paused"] == .bool(true))
            #expect(try await h.call("status")["paused"] == .bool(true))
            #expect(try await h.call("resume")["paused"] == .bool(false))
            #expect(try await h.call("reload")["reloaded"] == .bool(true))
            // resync pulls the named collection again, from the beginning, and says so.
            let resynced = try await h.call(
                "resync", .object([("collections", .array([.string("tickets")])), ("wait", .bool(true))]))
            #expect(resynced["resynced"] == .array([.string("tickets")]), "\(resynced.serialized)")
            #expect(resynced["pulled"]?["tickets"]?.intValue == server["tickets"], "\(resynced.serialized)")
            do {
                _ = try await h.call("resync", .object(["collections": .array([])]))
                Issue.record("a resync of nothing was accepted")
            } catch let ControlClient.Failure.rpc(error) {
                #expect(error.code == -32602)
                #expect(error.data?["param"] == .string("collections"))
            }
            do {
                _ = try await h.call("resolveConflict", .object(["id": .number(99), "keep": .string("local")]))
                Issue.record("resolved a conflict that does not exist")
            } catch let ControlClient.Failure.rpc(error) {
                #expect(error.code == -32001)
            }
            do {
                _ = try await h.call("getOrder", .object(["id": .string("ord_2"), "colour": .string("red")]))
                Issue.record("accepted an unknown param")
            } catch let ControlClient.Failure.rpc(error) {
                #expect(error.code == -32602)
                #expect(error.data?["param"] == .string("colour"))
            }
            // A caller's id with a line break and an escape: logged (the audit line), never as a line of its own.
            _ = try? await h.call(
                "updateOrder",
                .object([("id", .string("nope\nFORGED store destroyed\u{1B}[31m")), ("notes", .string("x"))]))
            let forged = h.log()
            #expect(forged.contains("FORGED store destroyed"), "the audit line was not written")
            #expect(!forged.contains("\nFORGED") && !forged.contains("\u{1B}"), "a caller wrote a line of its own")
            // A NUL: SQLite would stop at it — ord_2 edited for "ord_2\0…", a note cut short on disk.
            for (params, param) in [
                (JSONValue.object([("id", .string("ord_2\u{0}evil")), ("notes", .string("x"))]), "id"),
                (.object([("id", .string("ord_2")), ("notes", .string("before\u{0}after"))]), "notes"),
            ] {
                do {
                    _ = try await h.call("updateOrder", params)
                    Issue.record("accepted a NUL in \(param)")
                } catch let ControlClient.Failure.rpc(error) {
                    #expect(error.code == -32602)
                    #expect(error.data?["param"] == .string(param))
                }
            }

            // replyToTicket with the caller's id: a repeat answers the same message; other content is -32002 on id.
            let reply = JSONValue.object([
                ("ticketId", .string("tkt_3")), ("content", .string("once")),
                ("id", .string("0b9c1d52-8f1e-4c59-9a3e-5f1d2a7c6b40")),
            ])
            // Paused: a debounced push between the two calls would turn the row into the server's copy.
            _ = try await h.call("pause")
            let first = try await h.call("replyToTicket", reply)
            #expect(try await h.call("replyToTicket", reply) == first)
            do {
                _ = try await h.call(
                    "replyToTicket",
                    .object([
                        ("ticketId", .string("tkt_3")), ("content", .string("twice")),
                        ("id", .string("0b9c1d52-8f1e-4c59-9a3e-5f1d2a7c6b40")),
                    ]))
                Issue.record("the same id with other content was accepted")
            } catch let ControlClient.Failure.rpc(error) {
                #expect(error.kind == .invalidValue)
                #expect(error.data?["field"] == .string("id"))
            }
            // discard takes only a dead change.
            do {
                _ = try await h.call("discard", .object(["seq": .number(424_242)]))
                Issue.record("discarded a change that does not exist")
            } catch let ControlClient.Failure.rpc(error) {
                #expect(error.kind == .notFound)
            }
        }
    }

    @Test("the socket follows JSON-RPC 2.0 on malformed lines, batches and notifications, and stays up")
    func protocolErrors() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            let replies = try await h.raw(
                [
                    "{oops", #"{"jsonrpc":"2.0","method":"ping"}"#, "[]",
                    #"[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","method":"nope","id":2},{"jsonrpc":"2.0","method":"ping"}]"#,
                    String(repeating: "[", count: 100_000), #"{"jsonrpc":"2.0","method":"status","params":[1],"id":3}"#,
                    #"{"jsonrpc":"2.0","method":"ping","id":"last"}"#,
                ], replies: 6)
            #expect(replies.count == 6, "\(replies)")
            let parsed = replies.compactMap { try? JSONParser(limits: .init(maxDepth: 100)).parse($0) }
            #expect(parsed.count == 6)
            #expect(parsed[0]["error"]?["code"] == .number(-32700))
            #expect(parsed[1]["error"]?["code"] == .number(-32600))
            guard case .array(let batch) = parsed[2] else {
                Issue.record("batch reply is not an array")
                return
            }
            #expect(batch.count == 2, "the notification in the batch gets no reply")
            #expect(batch[0]["result"] == .string("pong"))
            #expect(batch[1]["error"]?["code"] == .number(-32601))
            #expect(parsed[3]["error"]?["code"] == .number(-32600))
            #expect(parsed[4]["error"]?["code"] == .number(-32602))
            #expect(parsed[5]["result"] == .string("pong"))
            #expect(parsed[5]["id"] == .string("last"))
        }
    }

    @Test("a batch of queueChange calls: each answered on its own, in order; an unknown record refused alone")
    func queueChangeBatch() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            #expect(try await h.call("sync", .object(["wait": .bool(true)]))["stop"] == nil)
            _ = try await h.call("pause")
            let ids = (3...12).map { "ord_\($0)" }
            // Another program edits ten orders in one transaction, as an import would.
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let queue = try DatabaseQueue(path: h.storePath, configuration: configuration)
            try await queue.write { db in
                for id in ids {
                    try db.execute(sql: "UPDATE orders SET notes = ? WHERE id = ?", arguments: ["batch \(id)", id])
                }
            }
            try queue.close()

            let path = h.socketPath
            let asked = ids.prefix(5) + ["ord_missing"] + ids.dropFirst(5)
            let results = try await DaemonHarness.blocking {
                try ControlClient(path: path).callBatch(
                    RPC.QueueChange.self, asked.map { .init(kind: .orderUpdated, id: $0) })
            }
            #expect(results.count == asked.count)
            var seqs: [Int64] = []
            for (id, result) in zip(asked, results) {
                switch result {
                case .success(let queued) where id != "ord_missing":
                    #expect(queued.queued && queued.fields == ["notes"], "\(id): \(queued)")
                    if let seq = queued.seq { seqs.append(seq) }
                case .failure(let error) where id == "ord_missing":
                    #expect(error.kind == .notFound)
                default:
                    Issue.record("\(id): \(result)")
                }
            }
            #expect(Set(seqs).count == ids.count, "one change each")
            #expect(try await h.call("status")["pending"] == .number(ids.count))
            guard case .array(let pending) = try await h.call("pending") else {
                Issue.record("pending")
                return
            }
            #expect(Set(pending.compactMap { $0["recordId"]?.stringValue }) == Set(ids))
        }
    }

    @Test("a burst of changes from one caller: 20 audit lines, then one line that counts the rest when its second ends")
    func auditAllowance() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            let path = h.socketPath
            let ids = (1...30).map { "ord_\($0)" }
            // One line: the 30 calls arrive together, well within one second.
            let results = try await DaemonHarness.blocking {
                try ControlClient(path: path).callBatch(
                    RPC.QueueChange.self, ids.map { .init(kind: .orderUpdated, id: $0) })
            }
            #expect(results.count == ids.count)
            let pid = getpid()
            let summary = "control changes requested beyond the audit allowance"
            try await PushStack.waitUntil("the burst's summary line", timeout: .seconds(30)) {
                h.log().contains(summary)
            }
            let lines = h.log().split(separator: "\n")
            let logged = lines.filter { $0.contains("control change requested") && $0.contains("pid=\(pid)") }
            let summaries = lines.filter { $0.contains(summary) && $0.contains("pid=\(pid)") }
            #expect(logged.count == 20, "\(logged.count) calls logged one line each")
            #expect(summaries.count == 1)
            #expect(summaries.first?.contains("calls=10") == true, "\(summaries)")
            #expect(summaries.first?.contains("methods=queueChange=10") == true, "\(summaries)")
        }
    }

    @Test("subscribe delivers a sync's transitions in order: syncing, then completed")
    func subscribeTransitions() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            // Let the start-up run finish first, so the run observed is the one asked for here.
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            let path = h.socketPath
            let states = try await DaemonHarness.blocking { () -> [String] in
                let client = try ControlClient(path: path)
                _ = try client.call("subscribe")
                var seen: [String] = []
                _ = try client.call("sync", .object(["wait": .bool(true)])) { _, status in
                    if let state = status["state"]?.stringValue, seen.last != state { seen.append(state) }
                }
                // The final notifications of the run may follow its reply.
                while seen.last != "completed" {
                    let status = try client.nextNotification().params
                    if let state = status["state"]?.stringValue, seen.last != state { seen.append(state) }
                }
                return seen
            }
            let from = states.firstIndex(of: "syncing")
            #expect(from != nil, "\(states)")
            if let from { #expect(Array(states[from...]) == ["syncing", "completed"], "\(states)") }
        }
    }

    @Test("100 concurrent clients are all answered")
    func concurrentClients() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await h.call("status")["state"] != nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(answered == 100)
        }
    }

    @Test("repairctl: status, badge, a change pushed, exit codes 1, 64 and 69")
    func repairctl() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            let synced = try await h.repairctl(["sync", "--wait"])
            #expect(synced.status == 0, "\(synced)")
            #expect(synced.stdout.contains("sync done"))
            let status = try await h.repairctl(["status", "--json"])
            #expect(status.status == 0)
            let parsed = try JSONParser().parse(status.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(parsed["pending"] == .number(0))

            #expect(try await h.repairctl(["order", "note", "ord_4", "from the counter"]).status == 0)
            let badge = try await h.repairctl(["status", "--badge"])
            #expect(["1", "0"].contains(badge.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(badge)")
            #expect(try await h.repairctl(["sync", "--wait"]).status == 0)
            let order = try await h.backend.get("/api/v1/orders/ord_4").object()
            #expect(order["notes"] as? String == "from the counter")
            let shown = try await h.repairctl(["order", "show", "#1004"])
            #expect(shown.stdout.contains("from the counter"))

            let unknown = try await h.repairctl(["queue", "order-updated", "ord_missing"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("ord_missing"))
            #expect(try await h.repairctl(["frobnicate"]).status == 64)
            #expect(try await h.repairctl(["queue", "order-teleported", "ord_1"]).status == 64)

            // A message another program wrote, refused by the server: queueing it again says so and exits 1 — the
            // message will not reach the server until someone retries or discards its change.
            let message = "00000000-0000-4000-8000-00000000000a"
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let queue = try DatabaseQueue(path: h.storePath, configuration: configuration)
            try await queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO ticket_messages (id, ticket_id, content, sender_type, is_internal, created_at, updated_at, version)
                        VALUES (?, 'tkt_1', 'Refused', 'staff', 0, '2026-11-23T10:00:00.000Z', '2026-11-23T10:00:00.000Z', 0)
                        """, arguments: [message])
            }
            try queue.close()
            _ = try await h.backend.send(
                .POST, "/admin/faults/next",
                json: #"{"kind":"422","method":"POST","path_prefix":"/api/v1/tickets/tkt_1/messages"}"#)
            let first = try await h.repairctl(["queue", "ticket-message-created", message])
            #expect(first.status == 0, "\(first)")
            _ = try await h.repairctl(["sync", "--wait"])
            let refused = try await h.repairctl(["queue", "ticket-message-created", message])
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.stderr.contains("is dead (") && refused.stderr.contains("(change "), "\(refused)")
            let refusedJSON = try await h.repairctl(["queue", "ticket-message-created", message, "--json"])
            #expect(refusedJSON.status == 1, "\(refusedJSON)")
            let answer = try JSONParser().parse(refusedJSON.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(answer["outcome"] == .string("dead") && answer["queued"] == .bool(false), "\(answer)")
            #expect(answer["seq"]?.intValue != nil, "the dead change, to retry or discard: \(answer)")

            h.kill(SIGTERM)
            #expect(await h.waitForExit() == 0)
            let stopped = try await h.repairctl(["status"])
            #expect(stopped.status == 69)
            #expect(stopped.stderr.contains("not running"), "\(stopped.stderr)")
            let offlineBadge = try await h.repairctl(["status", "--badge"])
            #expect(offlineBadge.status == 0)
            #expect(offlineBadge.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "offline")
        }
    }

    @Test("every repairctl command runs against the daemon, in tables and in JSON")
    func everyRepairctlCommand() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            #expect(try await h.repairctl(["sync", "--wait"]).status == 0)
            let commands: [[String]] = [
                ["status"], ["ping"], ["pending"], ["pending", "--failed"], ["retry"], ["conflicts"],
                ["conflicts", "--all"],
                ["pause"], ["resume"], ["reload"], ["queue", "order-updated", "ord_5"], ["sync"],
                ["sync", "orders", "--wait"],
                ["order", "set-status", "ord_5", "in_progress"], ["order", "note", "ord_5", "a note"],
                ["order", "show", "ord_5"], ["order", "show", "#1005"],
                ["device", "update", "dev_5", "--diagnosis", "checked"],
                ["ticket", "reply", "tkt_5", "hello", "--internal"], ["ticket", "show", "tkt_5"], ["orders"],
                ["orders", "--status", "in_progress"], ["devices", "--order", "ord_5"], ["clients"], ["clients", "a"],
                ["tickets"], ["dashboard"], ["dashboard", "--period", "month"],
            ]
            for command in commands {
                let table = try await h.repairctl(command)
                #expect(table.status == 0, "\(command): \(table.stderr)")
                #expect(!table.stdout.isEmpty, "\(command)")
                let json = try await h.repairctl(command + ["--json"])
                #expect(json.status == 0, "\(command) --json: \(json.stderr)")
                let text = json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect((try? JSONParser().parse(text)) != nil, "\(command) --json printed: \(text.prefix(200))")
            }
            #expect(
                try await h.repairctl(["device", "update", "dev_5"]).status == 64, "at least one field is required")
        }
    }

    @Test("a peer outside the group reads the status but may not change anything or read records; refusals are logged")
    func peerAuthorization() async throws {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            print("skipping: running a client as another user needs root and setpriv")
            try Test.cancel("needs root and setpriv to run a client as another user")
        }
        try await DaemonHarness.with { h in
            h.environment = ["REPAIRSYNCD_CONTROL_PUBLIC_STATUS": "true"]
            // Other users must be able to reach the socket's directory.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: h.directory.url.path)
            try await h.start()
            // READY comes before the first sync: ord_1 must be in the replica before root may note it.
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            var info = stat()
            #expect(stat(h.socketPath, &info) == 0 && info.st_mode & 0o777 == 0o666)
            let status = try await h.repairctl(["status", "--json"], asUID: 65534)
            #expect(status.status == 0, "\(status.stderr)")
            let change = try await h.repairctl(["order", "note", "ord_1", "not allowed"], asUID: 65534)
            #expect(change.status == 1)
            #expect(change.stderr.contains("may read the status only"), "\(change.stderr)")
            let records = try await h.repairctl(["orders"], asUID: 65534)
            #expect(records.status == 1, "the shop's records are not for everyone")
            // Nor are the changes and conflicts, which carry the records' values.
            for command in [["pending"], ["conflicts"]] {
                let refused = try await h.repairctl(command, asUID: 65534)
                #expect(refused.status == 1 && refused.stderr.contains("may read the status only"), "\(refused)")
            }
            let allowed = try await h.repairctl(["order", "note", "ord_1", "allowed"])
            #expect(allowed.status == 0, "root may: \(allowed.stderr)")
            #expect(h.log().contains("control request refused"))
            #expect(h.log().contains("uid=65534"))
            #expect(h.log().contains("control change requested"))

            // Refusals have an allowance per user, whatever its processes: a peer hammering methods it may not call
            // cannot write past journald's rate limit and have the daemon's other messages dropped. 34 refused calls
            // in all (the four above, 30 in one batch), at most 20 logged in a second, the rest summed up.
            let burst = try await h.repairctl(["queue", "order-updated"] + (1...30).map { "ord_\($0)" }, asUID: 65534)
            #expect(burst.status == 1)
            let summary = "control requests refused beyond the audit allowance"
            try await PushStack.waitUntil("the refusals' summary line", timeout: .seconds(30)) {
                h.log().contains(summary)
            }
            let lines = h.log().split(separator: "\n")
            let logged = lines.filter { $0.contains("control request refused") && $0.contains("uid=65534") }
            let summaries = lines.filter { $0.contains(summary) }
            let summed = summaries.compactMap { line in
                line.firstMatch(of: /calls=(\d+)/).flatMap { Int($0.1) }
            }.reduce(0, +)
            #expect(logged.count + summed == 34, "\(logged.count) logged, \(summed) summed up: \(summaries)")
            #expect(logged.count <= 24, "\(logged.count) refused calls logged one line each")
            #expect(summaries.allSatisfy { $0.contains("methods=") && !$0.contains("pid=") }, "\(summaries)")
        }
    }

    @Test("the API token never appears in the daemon's output, RPC replies or repairctl output")
    func tokenNeverLeaks() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            var replies: [String] = []
            for method in ["status", "pending", "conflicts", "version", "reload"] {
                replies.append(try await h.call(method).serialized)
            }
            replies.append(try await h.call("sync", .object(["wait": .bool(true)])).serialized)
            let outputs = [
                try await h.repairctl(["status"]), try await h.repairctl(["status", "--json"]),
                try await h.repairctl(["sync", "--wait"]), try await h.repairctl(["reload"]),
            ]
            let check = try await DaemonHarness.runDaemonBinary(["--config", h.configPath, "--check-config"])
            h.kill(SIGTERM)
            _ = await h.waitForExit()
            #expect(check.stdout.contains("<redacted>"))
            let everything =
                replies.joined() + outputs.map { $0.stdout + $0.stderr }.joined() + check.stderr + check.stdout
                + h.log()
            #expect(!everything.isEmpty)
            #expect(!everything.contains(RunningBackend.token), "the token leaked")
        }
    }

    @Test(
        "purge refuses while changes are pending, then with --force removes the store, its files and the copies beside it, and stops; a start removes a backup's copy left behind"
    )
    func purge() async throws {
        try await DaemonHarness.with { h in
            let directory = (h.storePath as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // A backup's copy a killed daemon left (named after the store, and as before it was), and another
            // store's beside it.
            let stale = [
                h.storePath + ".backup-0f6c1d0e-5a8e-4c55-9a51-2c3f4b5d6e7f",
                directory + "/backup-0F6C1D0E-5A8E-4C55-9A51-2C3F4B5D6E7F.sqlite",
            ]
            for file in stale + [directory + "/other.sqlite.backup-1"] {
                #expect(FileManager.default.createFile(atPath: file, contents: Data("customer records".utf8)))
            }
            try await h.start()
            #expect(stale.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "\(h.log().suffix(800))")
            #expect(FileManager.default.fileExists(atPath: directory + "/other.sqlite.backup-1"), "another store's")
            try FileManager.default.removeItem(atPath: directory + "/other.sqlite.backup-1")
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            _ = try await h.call("updateOrder", .object(["id": .string("ord_1"), "notes": .string("unsent")]))
            let refused = try await h.repairctl(["purge"])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("1 change(s) are not on the server"), "\(refused.stderr)")
            #expect(FileManager.default.fileExists(atPath: h.storePath))
            // A damaged store kept aside earlier, and a backup's copy in the making: the shop's records, both.
            for file in [h.storePath + ".corrupt-20261101T120000Z", h.storePath + ".corrupt-20261101T120000Z-wal"] {
                #expect(FileManager.default.createFile(atPath: file, contents: Data("customer records".utf8)))
            }

            let purged = try await h.repairctl(["purge", "--force"])
            #expect(purged.status == 0, "\(purged.stderr)")
            #expect(purged.stdout.contains("removed \(h.storePath)"))
            #expect(purged.stdout.contains("discarded 1 local change"))
            #expect(await h.waitForExit() == 0, "the daemon stops after a purge")
            let left = try FileManager.default.contentsOfDirectory(
                atPath: (h.storePath as NSString).deletingLastPathComponent)
            #expect(left.isEmpty, "left behind: \(left)")
        }
    }

    @Test(
        "a store whose damage the open does not meet (an outbox index) is kept aside like a damaged file, not a failed start again and again; every start and doctor say the kept file holds a waiting change"
    )
    func damageFoundAfterTheOpen() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            _ = try await h.call("updateOrder", .object(["id": .string("ord_1"), "notes": .string("never sent")]))
            h.kill(SIGTERM)
            #expect(await h.waitForExit() == 0)
            // One page of the outbox's state index overwritten, as a disk fault would.
            var readOnly = Configuration()
            readOnly.readonly = true
            let (root, pageSize) = try await DatabaseQueue(path: h.storePath, configuration: readOnly).read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'outbox_state'") ?? 0,
                    try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                )
            }
            try #require(root > 1)
            let file = try #require(FileHandle(forWritingAtPath: h.storePath))
            try file.seek(toOffset: UInt64((root - 1) * pageSize))
            try file.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
            try file.close()

            try await h.start()
            #expect(h.log().contains("the store is damaged: kept aside"), "\(h.log().suffix(1500))")
            let directory = (h.storePath as NSString).deletingLastPathComponent
            let kept = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
                $0.hasPrefix("replica.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            }
            #expect(kept.count == 1, "\(kept)")
            #expect(h.log().contains("unsent_changes=1"), "said at the start")
            let doctor = try await h.repairctl(["doctor", "--json"])
            #expect(doctor.stdout.contains("1 local change(s) were waiting in it"), "\(doctor.stdout)")
            let status = try await h.call("status")
            #expect(status["collections"] != nil, "the fresh replica serves")
        }
    }

    @Test("passcodes: sealed with the configured key, revealed only when asked, never without a key")
    func passcodes() async throws {
        try await DaemonHarness.with { h in
            let keyPath = h.directory.path("passcode.key")
            try Data((0..<32).map { UInt8($0) }).base64EncodedString().write(
                toFile: keyPath, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
            h.environment = ["REPAIRSYNCD_STORE_PASSCODE_KEY_FILE": keyPath]
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            guard
                case .array(let devices)? = try await h.call("getOrder", .object(["id": .string("ord_2")]))["devices"],
                let deviceId = devices.first?["id"]?.stringValue
            else {
                Issue.record("ord_2 has no device")
                return
            }
            let edit = try await h.backend.send(
                .PATCH, "/admin/records/devices/\(deviceId)", json: #"{"passcode":"zebra-4242-passcode"}"#)
            #expect(edit.status == 200)
            _ = try await h.call("sync", .object(["wait": .bool(true)]))

            let hidden = try await h.call("getOrder", .object(["id": .string("ord_2")]))
            #expect(hidden.serialized.contains("zebra-4242") == false)
            let shown = try await h.call(
                "getOrder", .object(["id": .string("ord_2"), "includePasscodes": .bool(true)]))
            #expect(shown.serialized.contains("zebra-4242-passcode"))
            #expect(try await h.repairctl(["order", "show", "ord_2"]).stdout.contains("zebra-4242") == false)
            #expect(
                try await h.repairctl(["order", "show", "ord_2", "--show-passcodes"]).stdout.contains(
                    "zebra-4242-passcode"))
            #expect(h.log().contains("passcodes revealed"))
            h.kill(SIGTERM)
            _ = await h.waitForExit()
            let raw = (try? Data(contentsOf: URL(fileURLWithPath: h.storePath))) ?? Data()
            let wal = (try? Data(contentsOf: URL(fileURLWithPath: h.storePath + "-wal"))) ?? Data()
            #expect(!raw.isEmpty)
            #expect(raw.range(of: Data("zebra-4242".utf8)) == nil && wal.range(of: Data("zebra-4242".utf8)) == nil)
        }
    }

    @Test("a backup taken during a sync is a sound database, readable only by whoever asked for it")
    func backupDuringSync() async throws {
        try await DaemonHarness.with(orders: 200) { h in
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            // Every request slow, and a resync from scratch: the backup surely overlaps the sync's writes.
            _ = try await h.backend.send(.POST, "/admin/cursors/expire")
            _ = try await h.backend.send(.PUT, "/admin/faults", json: #"{"rate":1,"kinds":{"slow":1},"slow_ms":500}"#)
            let watcher = try StatusWatcher(path: h.socketPath)
            _ = try await h.call("sync")
            #expect(await watcher.wait(timeout: 10) { $0["state"] == .string("syncing") } != nil)
            let file = h.directory.path("backup.sqlite")
            let result = try await h.repairctl(["backup", file])
            #expect(result.status == 0, "\(result.stderr)")
            let during = try await h.call("status")
            #expect(during["state"] == .string("syncing"), "the backup was taken while the sync ran")
            _ = try await h.backend.send(.DELETE, "/admin/faults")

            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
            let copy = try DatabaseQueue(path: file)
            let integrity = try await copy.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            #expect(integrity == ["ok"])
            let orders = try await copy.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM orders") }
            #expect((orders ?? 0) > 0)
            let again = try await h.repairctl(["backup", file])
            #expect(again.status == 1, "an existing file is never overwritten")
        }
    }

    /// `repairctl doctor --json` (or, `offline`, `repairsyncd doctor --config … --json`): its exit status and the
    /// checks by name.
    static func doctor(_ h: DaemonHarness, offline: Bool = false) async throws
        -> (status: Int32, checks: [String: (level: String, detail: String, fix: String)])
    {
        let (status, stdout, stderr): (Int32, String, String)
        if offline {
            let result = try await DaemonHarness.runDaemonBinary(["doctor", "--config", h.configPath, "--json"])
            (status, stdout, stderr) = (result.status, result.stdout, result.stderr)
        } else {
            let result = try await h.repairctl(["doctor", "--json"])
            (status, stdout, stderr) = (result.status, result.stdout, result.stderr)
        }
        guard case .array(let checks) = try JSONParser().parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw ControlClient.Failure.protocolError("doctor printed: \(stdout) \(stderr)") }
        var byName: [String: (level: String, detail: String, fix: String)] = [:]
        for check in checks {
            byName[check["name"]?.stringValue ?? "?"] = (
                check["level"]?.stringValue ?? "?", check["detail"]?.stringValue ?? "", check["fix"]?.stringValue ?? ""
            )
        }
        return (status, byName)
    }

    @Test(
        "doctor: the daemon checks itself and names its configuration; without it, repairctl points to repairsyncd doctor, which checks the rest"
    )
    func doctorHealthyAndStopped() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            let healthy = try await Self.doctor(h)
            #expect(healthy.status == 0)
            #expect(
                Set(healthy.checks.keys).isSuperset(of: [
                    "config", "token file", "daemon", "api", "token", "clock", "store", "changes", "connectivity",
                    "last sync",
                ]))
            #expect(healthy.checks.values.allSatisfy { $0.level == "ok" }, "\(healthy.checks)")
            #expect(
                healthy.checks["config"]?.detail.contains(h.configPath) == true,
                "the daemon names the file it runs with")

            h.kill(SIGTERM)
            _ = await h.waitForExit()
            let stopped = try await Self.doctor(h)
            #expect(stopped.status == 1)
            #expect(stopped.checks["daemon"]?.level == "fail")
            #expect(stopped.checks["daemon"]?.detail.contains("not running") == true)
            #expect(stopped.checks["daemon"]?.fix.contains("repairsyncd doctor") == true)
            let table = try await h.repairctl(["doctor"])
            #expect(table.status == 1)
            #expect(table.stdout.contains("→ run `repairsyncd doctor`"), "\(table.stdout)")

            let offline = try await Self.doctor(h, offline: true)
            #expect(offline.status == 1, "no daemon answers")
            #expect(offline.checks["daemon"]?.level == "fail")
            #expect(offline.checks["config"]?.level == "ok")
            #expect(offline.checks["token file"]?.level == "ok")
            #expect(offline.checks["api"]?.level == "ok")
            #expect(offline.checks["token"]?.level == "ok", "root reads the token and the API takes it")
            #expect(offline.checks["store"]?.level == "ok", "read directly, read-only")
            #expect(offline.checks["store"]?.detail.contains("0 changes pending") == true)
        }
    }

    @Test("doctor: a refused token fails and names the token; a world-readable token file fails")
    func doctorToken() async throws {
        try await DaemonHarness.with { h in
            try "not-the-token".write(toFile: h.directory.path("token"), atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: h.directory.path("token"))
            try await h.start()
            let refused = try await Self.doctor(h)
            #expect(refused.status == 1)
            #expect(refused.checks["token"]?.level == "fail")
            #expect(refused.checks["token"]?.detail.contains("refused the token") == true)
            #expect(
                !(refused.checks.values.contains { $0.detail.contains("not-the-token") }),
                "the token itself is never shown")

            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: h.directory.path("token"))
            let open = try await Self.doctor(h)
            #expect(open.checks["token file"]?.level == "fail")
            #expect(open.checks["token file"]?.detail.contains("readable by others") == true)
        }
    }

    @Test("doctor: an unreachable API fails")
    func doctorUnreachable() async throws {
        let h = try DaemonHarness(baseURL: "http://127.0.0.1:9")
        defer {
            h.kill(SIGKILL)
            h.notify.close()
        }
        try await h.start()
        let result = try await Self.doctor(h)
        #expect(result.status == 1)
        #expect(result.checks["api"]?.level == "fail")
    }

    @Test(
        "the status-bar examples: `watch --badge` follows the pending count through a pipe; the conflict script notifies"
    )
    func badgeExamples() async throws {
        try await DaemonHarness.with { h in
            h.environment = ["REPAIRSYNCD_CONFLICTS_ORDERS": "manual"]
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            // The waybar/polybar command line, read through a pipe as a bar reads it.
            let badge = try ChildProcess(
                [DaemonHarness.binaries.appendingPathComponent("repairctl").path, "watch", "--badge"],
                environment: ["REPAIRSYNCD_SOCKET": h.socketPath], logPath: h.directory.path("badge.log"),
                pipeOutput: true, mergeErrors: true)
            defer { badge.signal(SIGKILL) }
            #expect(await badge.readLines(until: { $0 == "0" }).last == "0")
            _ = try await h.call("updateOrder", .object(["id": .string("ord_6"), "notes": .string("badge")]))
            #expect(await badge.readLines(until: { $0 == "1" }).last == "1")

            // The notification script, with a notify-send that records its arguments.
            let bin = h.directory.path("bin")
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            // A FIFO: reading it waits for the first notification, no polling.
            let sent = h.directory.path("notifications")
            #expect(mkfifo(sent, 0o600) == 0)
            let received = Task {
                try await DaemonHarness.blocking { () -> String in
                    guard let fifo = FileHandle(forReadingAtPath: sent) else { return "" }
                    return String(decoding: fifo.readDataToEndOfFile(), as: UTF8.self)
                }
            }
            try "#!/bin/sh\necho \"$*\" > \(sent)\n".write(
                toFile: bin + "/notify-send", atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/notify-send")
            try FileManager.default.createSymbolicLink(
                atPath: bin + "/repairctl",
                withDestinationPath: DaemonHarness.binaries.appendingPathComponent("repairctl").path)
            let notifier = try ChildProcess(
                ["/bin/sh", root.appendingPathComponent("docs/examples/notify-on-conflict.sh").path],
                environment: ["REPAIRSYNCD_SOCKET": h.socketPath, "PATH": bin + ":/usr/bin:/bin"],
                logPath: h.directory.path("notifier.log"))
            defer { notifier.signal(SIGKILL) }
            let watcher = try StatusWatcher(path: h.socketPath)
            let edit = try await h.backend.send(
                .PATCH, "/admin/records/orders/ord_6", json: #"{"notes":"server side"}"#)
            #expect(edit.status == 200)
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            #expect(await watcher.wait(timeout: 10) { $0["openConflicts"] == .number(1) } != nil)
            // If the script never writes, end the read after 60 s instead of hanging the suite (an empty text fails).
            // Generous: on a machine running the whole suite, a shell, `repairctl watch` and a `sed` per status line
            // took more than 10 s to start and answer.
            let unblock = Task {
                try await Task.sleep(for: .seconds(60))
                let fd = open(sent, O_WRONLY | O_NONBLOCK)
                if fd >= 0 { close(fd) }
            }
            let text = try await received.value
            unblock.cancel()
            #expect(text.contains("1 conflict(s) need a decision"), "\(text)")
        }
    }

    @Test("with retention.days, a successful full sync removes old finished records and the status says so")
    func retentionInTheDaemon() async throws {
        try await DaemonHarness.with(orders: 100) { h in
            h.environment = ["REPAIRSYNCD_RETENTION_DAYS": "30"]
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            let watcher = try StatusWatcher(path: h.socketPath)
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = await watcher.wait(timeout: 5) { $0["retention"] != nil && $0["retention"] != .null }
            let status = try await h.call("status")
            #expect((status["storeBytes"]?.intValue ?? 0) > 0)
            let removed = ["orders", "tickets"].compactMap { status["retention"]?[$0]?.intValue }.reduce(0, +)
            #expect(removed > 0, "\(status["retention"]?.serialized ?? "no retention")")
            #expect(h.log().contains("retention removed old records"))
            let shown = try await h.repairctl(["status"])
            #expect(shown.stdout.contains("retention removed"))
        }
    }

    @Test(
        "stats counts runs, pushes and pulls; the metrics text file follows the Prometheus text format and node_exporter can read it; idle connections to the metrics listener take few descriptors"
    )
    func statsAndMetrics() async throws {
        try await DaemonHarness.with { h in
            let textfile = h.directory.path("repairsyncd.prom")
            h.environment = ["REPAIRSYNCD_METRICS_TEXTFILE": textfile, "REPAIRSYNCD_METRICS_LISTEN": "127.0.0.1:0"]
            // The unit's UMask=0077.
            h.launcher = ["/bin/sh", "-c", "umask 077; exec \"$0\" \"$@\""]
            try await h.start()
            // The listener tells systemd (and so this test) where it is.
            let status = await h.notify.waitForLine(startingWith: "STATUS=metrics on http://127.0.0.1:", timeout: 10)
            let port = status.flatMap { Int($0.split(separator: ":").last?.split(separator: "/").first ?? "") }
            let listened = try #require(port, "\(h.notify.received)")
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("updateOrder", .object(["id": .string("ord_2"), "notes": .string("metrics")]))
            let beforeSync = h.notify.datagramCount
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            // The text file follows the status at most four times a second; the status line sent with it says when
            // it shows the run (the change pushed: nothing pending).
            let shown = await h.notify.waitForLine(after: beforeSync, timeout: 10) { line in
                ["STATUS=completed · 0 pending", "STATUS=idle · 0 pending"].contains { line.hasPrefix($0) }
            }
            #expect(shown != nil, "\(h.notify.received)")
            let stats = try await h.call("stats")
            #expect((stats["lifetime"]?["runs"]?.intValue ?? 0) >= 2)
            #expect(stats["lifetime"]?["pushed"]?["orders"] == .number(1))
            #expect((stats["last24h"]?["pulled"]?["orders"]?.intValue ?? 0) >= 30)
            #expect((stats["httpResponses"]?["2xx"]?.intValue ?? 0) > 0)
            let table = try await h.repairctl(["stats"])
            #expect(table.status == 0)
            #expect(table.stdout.contains("success rate"))

            // The text file: every sample line is `name{labels} value`, every name has a TYPE, names follow the rules.
            let text = try String(contentsOfFile: textfile, encoding: .utf8)
            var typed: Set<String> = []
            var samples = 0
            for line in text.split(separator: "\n") {
                if line.hasPrefix("# TYPE ") {
                    let parts = line.split(separator: " ")
                    #expect(
                        parts.count == 4 && ["counter", "gauge", "histogram"].contains(String(parts[3])), "\(line)")
                    typed.insert(String(parts[2]))
                } else if line.hasPrefix("#") {
                    continue
                } else {
                    let match = line.wholeMatch(
                        of: /([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)/)
                    #expect(match != nil, "not a sample line: \(line)")
                    if let name = match?.1 {
                        let base = String(name).replacing(/_(bucket|sum|count)$/, with: "")
                        #expect(typed.contains(String(name)) || typed.contains(base), "\(name) has no TYPE")
                    }
                    samples += 1
                }
            }
            #expect(samples > 5)
            let served = try await RunningAddress(port: listened).get("/metrics", token: nil)
            #expect(served.status == 200)
            #expect(served.headers.first(name: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(served.text.contains("repairsyncd_sync_runs_total"))
            for name in [
                "repairsyncd_sync_runs_total", "repairsyncd_sync_duration_seconds", "repairsyncd_pending_changes",
                "repairsyncd_last_success_timestamp_seconds",
            ] {
                #expect(typed.contains(name), "\(name) missing from \(typed.sorted())")
            }
            let mode = try FileManager.default.attributesOfItem(atPath: textfile)[.posixPermissions] as? Int
            #expect(mode == 0o644, "node_exporter runs as its own user: \(String(mode ?? 0, radix: 8))")

            // Idle connections held open by any local user: a few are served, the rest wait in the listen queue —
            // none takes one of the daemon's descriptors, which its socket, store and API need.
            let pid = try #require(h.process?.pid)
            func descriptors() -> Int {
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
            }
            let before = descriptors()
            var idle: [Int32] = []
            defer { for fd in idle { close(fd) } }
            for _ in 0..<120 {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(listened).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                #expect(connected == 0)
                idle.append(fd)
            }
            let answered = try await h.call("status")
            #expect(answered["state"] != nil)
            // The daemon accepts in batches as its loop gets to them: watched for up to 2 s (they would all be taken
            // by then), or until they are taken.
            let watched = ContinuousClock.now.advanced(by: .seconds(2))
            while ContinuousClock.now < watched, descriptors() - before <= 20 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let held = descriptors() - before
            #expect(held <= 20, "120 idle connections took \(held) descriptors")
        }
    }

    @Test("SIGTERM during a push exits 0; after a restart every change is on the server exactly once")
    func sigtermDuringSync() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            let before = try await h.backend.get("/admin/counters").object()["patches_applied"] as? Int ?? 0
            // Every PATCH is slow, so the push is surely in progress when the signal comes.
            let plan = try await h.backend.send(
                .PUT, "/admin/faults", json: #"{"rate":1,"kinds":{"slow":1},"slow_ms":300}"#)
            #expect(plan.status == 200)
            for n in 1...10 {
                _ = try await h.call(
                    "updateOrder", .object(["id": .string("ord_\(n)"), "notes": .string("term \(n)")]))
            }
            // Wait until the first PATCH reached the server, then stop the daemon.
            let path = h.socketPath
            try await DaemonHarness.blocking {
                let client = try ControlClient(path: path)
                _ = try client.call("subscribe")
                _ = try client.call("sync")
                while true {
                    let status = try client.nextNotification().params
                    if status["state"] == .string("syncing"), status["step"] == .string("pushing") { return }
                }
            }
            h.kill(SIGTERM)
            #expect(await h.waitForExit() == 0, "\(h.log())")
            #expect(h.log().contains("repairsyncd stopped"))

            _ = try await h.backend.send(.DELETE, "/admin/faults")
            try await h.start()
            let report = try await h.call("sync", .object(["wait": .bool(true)]))
            #expect(report["stop"] == nil)
            #expect(try await h.call("pending") == .array([]))
            for n in 1...10 {
                let order = try await h.backend.get("/api/v1/orders/ord_\(n)").object()
                #expect(order["notes"] as? String == "term \(n)")
            }
            let after = try await h.backend.get("/admin/counters").object()["patches_applied"] as? Int ?? 0
            #expect(after - before == 10)
        }
    }

    @Test(
        "SIGTERM while a request hangs: the run is cancelled once the shutdown grace has passed, the daemon exits 0 well within systemd's stop timeout, and the change goes after a restart"
    )
    func sigtermWhileARequestHangs() async throws {
        try await DaemonHarness.with { h in
            h.environment = ["REPAIRSYNCD_SYNC_SHUTDOWN_GRACE": "1s", "REPAIRSYNCD_API_REQUEST_TIMEOUT": "20s"]
            try await h.start()
            _ = try await h.call("sync", .object(["wait": .bool(true)]))
            _ = try await h.call("pause")
            // The PATCH waits 25 s at the server (then is applied): longer than api.request_timeout (20 s).
            let plan = try await h.backend.send(
                .PUT, "/admin/faults", json: #"{"rate":0,"kinds":{"slow":1},"slow_ms":25000}"#)
            #expect(plan.status == 200)
            _ = try await h.backend.send(.POST, "/admin/faults/next", json: #"{"kind":"slow","method":"PATCH"}"#)
            _ = try await h.call("updateOrder", .object(["id": .string("ord_3"), "notes": .string("hung")]))
            _ = try await h.call("sync")
            _ = try await PushStack.waitUntil("the PATCH waits at the server", timeout: .seconds(30)) {
                let counters = try? await h.backend.get("/admin/counters").object()
                return (counters?["faults_injected"] as? [String: Any])?["slow"] as? Int == 1
            }
            let signalled = ContinuousClock.now
            h.kill(SIGTERM)
            #expect(await h.waitForExit() == 0, "\(h.log().suffix(1500))")
            let took = signalled.duration(to: .now)
            // Well under the request's 20 s timeout, with room for a loaded machine's shutdown.
            #expect(
                took < .seconds(15), "stopped after \(took); the grace is 1 s, the request's timeout 20 s")
            #expect(h.log().contains("did not end within the shutdown grace"))

            // Restarted, the change in doubt is replayed under its key until the server has settled it (the first
            // PATCH is still waiting there).
            _ = try await h.backend.send(.DELETE, "/admin/faults")
            try await h.start()
            _ = try await PushStack.waitUntil("the change settled", timeout: .seconds(90)) {
                _ = try await h.call("sync", .object(["wait": .bool(true)]))
                return try await h.call("pending") == .array([])
            }
            let order = try await h.backend.get("/api/v1/orders/ord_3").object()
            #expect(order["notes"] as? String == "hung")
        }
    }

    @Test("SIGHUP with a bad configuration keeps the running one; a good one is taken")
    func reloadKeepsOldConfig() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            try h.writeConfig("log:\n  level: shouting")
            h.kill(SIGHUP)
            #expect(await h.notify.wait(for: "RELOADING=1"))
            #expect(try await h.call("ping") == .string("pong"))
            do {
                _ = try await h.call("reload")
                Issue.record("a bad configuration was accepted")
            } catch let ControlClient.Failure.rpc(error) {
                #expect(error.code == -32002)
                #expect(error.message.contains("log.level"))
            }
            #expect(h.log().contains("configuration reload refused"))
            try h.writeConfig("log:\n  level: debug")
            #expect(try await h.call("reload")["reloaded"] == .bool(true))
        }
    }

    @Test("a socket file left by a killed daemon is replaced at the next start")
    func staleSocket() async throws {
        try await DaemonHarness.with { h in
            try await h.start()
            h.kill(SIGKILL)
            _ = await h.waitForExit()
            #expect(FileManager.default.fileExists(atPath: h.socketPath), "SIGKILL leaves the socket file")
            try await h.start()
            #expect(try await h.call("ping") == .string("pong"))
        }
    }

    @Test("a bad configuration exits 78 and names the key, at start and with --check-config")
    func badConfigExits78() async throws {
        try await DaemonHarness.with { h in
            for (extra, key) in [
                ("sync:\n  interval: sometimes", "sync.interval"), ("probe:\n  mode: psychic", "probe.mode"),
                ("sync:\n  events: sometimes", "sync.events"),
            ] {
                let lines = try String(contentsOfFile: h.configPath, encoding: .utf8)
                    .replacingOccurrences(of: "sync:\n  interval: 15m\n  page_size: 100\n  events: false\n", with: "")
                try (lines + "\n" + extra + "\n").write(toFile: h.configPath, atomically: true, encoding: .utf8)
                for arguments in [["--config", h.configPath], ["--config", h.configPath, "--check-config"]] {
                    let result = try await DaemonHarness.runDaemonBinary(arguments)
                    #expect(result.status == 78, "\(arguments): \(result)")
                    #expect(result.stderr.contains(key), "\(result.stderr)")
                }
                try h.writeConfig()
            }
            let valid = try await DaemonHarness.runDaemonBinary(["--config", h.configPath, "--check-config"])
            #expect(valid.status == 0)
            let missing = try await DaemonHarness.runDaemonBinary(["--config", h.directory.path("nope.yaml")])
            #expect(missing.status == 78)
        }
    }
}
