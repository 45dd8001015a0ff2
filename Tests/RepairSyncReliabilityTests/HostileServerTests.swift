import Foundation
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncReliability
import Testing

/// Issue 16: the daemon against a server and network that follow docs/api.md the way real ones do — feeds that do
/// not advance, pages that do not decode, lost responses, crashes in flight, refusals, 412s that do not go away,
/// history that goes back, expired cursors, Retry-After dates from a skewed clock, proxy pages, stale copies, shop
/// tools writing the replica, a second daemon. Real `repairsyncd` and `repair-api-dev` processes throughout.
@Suite("Hostile server", .serialized, .timeLimit(.minutes(3)))
struct HostileServerTests {
    // MARK: 1 and 2: feeds

    @Test(
        "a feed that does not advance (same cursor, empty pages forever, or the same records under new cursor texts) stops after a few pages with an error naming it; the other collections pull",
        arguments: ["stuck_feed", "empty_feed", "rotating_feed"])
    func feedThatDoesNotAdvance(fault: String) async throws {
        // A failed run is retried after 5 × retry.base (capped at sync.interval, 15 min here), doubled per failure in
        // a row, with equal jitter (SyncSchedule). retry.base 1m: the retry is due minutes away, so it cannot start
        // while the test reads `status` ("syncing" would be that retry, not a stuck state), and is told apart from
        // the next periodic run (13.5–16.5 min).
        try await HostileStack.with(
            "stuck-\(fault)", config: "retry:\n  base: 1m\n  cap: 20m\n",
            before: { s in
                try await s.fault(fault, "GET", "/api/v1/orders/changes", count: 10_000)
            }
        ) { s in
            let report = try await s.sync()
            let failure = report["failedCollections"]?["orders"]?.stringValue ?? ""
            #expect(failure.contains("does not advance"), "\(report)")
            #expect(report["stop"]?.stringValue?.contains("orders") == true)
            let orders = try await s.collectionStatus("orders")
            #expect(orders?["lastError"]?.stringValue?.contains("does not advance") == true)
            let status = try await s.daemon.call("status")
            #expect(status["state"]?.stringValue != "syncing", "the run ended: \(status)")
            let runs = status["metrics"]?["runs"]?.intValue ?? 0
            let served = try await s.admin.counters().faultsInjected[fault] ?? 0
            // At most 4 pages per run — the first, whose cursor is new, then the engine's maxStalledPages (3) that do
            // not advance; none is fetched ahead of the third, which ends the pull — never an endless loop.
            #expect(served <= 4 * max(runs, 1) && served > 0, "\(served) damaged pages served in \(runs) runs")
            // Retried on the normal backoff: the next run planned is a retry, 0.5–2 × 5 min away (one or two failed
            // runs in a row), not the periodic run nor at once.
            let next = try await s.nextRun { $0 == "retry" }
            #expect(next?.reason == "retry", "\(String(describing: next))")
            let wait = next?.at.timeIntervalSinceNow ?? 0
            #expect(wait > 150 - 60 && wait <= 600, "the retry is due in \(Int(wait)) s")
            for collection in ["devices", "clients", "tickets", "ticket_messages"] {
                let entry = try await s.collectionStatus(collection)
                #expect(entry?["lastError"] == .null, "\(collection): \(String(describing: entry))")
                #expect((entry?["records"]?.intValue ?? 0) > 0)
            }
        }
    }

    @Test(
        "a page that does not decode commits nothing of itself; its error is in the collection's status and the others still pull"
    )
    func malformedPageStaysWithItsCollection() async throws {
        try await HostileStack.with(
            "malformed",
            before: { s in
                try await s.fault("malformed_record", "GET", "/api/v1/orders/changes", count: 10_000)
            }
        ) { s in
            let report = try await s.sync()
            #expect(report["failedCollections"]?["orders"] != nil, "\(report)")
            #expect(
                try StoreInspector.versions(s.store)["orders"]?.isEmpty == true, "nothing of the bad page committed")
            let orders = try await s.collectionStatus("orders")
            #expect(orders?["lastError"]?.stringValue?.isEmpty == false)
            let server = try await s.admin.send("GET", "/admin/counters").object()["records"] as? [String: Int] ?? [:]
            for collection in ["devices", "clients", "tickets", "ticket_messages"] {
                #expect(
                    try await s.collectionStatus(collection)?["records"]?.intValue == server[collection],
                    "\(collection)")
            }
        }
    }

    // MARK: 3 and 4: in-doubt changes

    @Test(
        "notes then status, with the notes PATCH's response lost: the pull does not take our own write for someone else's, and the status survives",
        arguments: ["server-wins", "client-wins", "last-write-wins", "merge", "manual"])
    func inDoubtWriteIsNotSomeoneElsesEdit(policy: String) async throws {
        let config = "conflicts:\n  orders: \(policy)\nretry:\n  base: 10m\n  cap: 20m\n"
        try await HostileStack.with("in-doubt-\(policy)", config: config) { s in
            try await s.sync()
            // Paused: every run below is the test's own (a debounced push would take the fault first under load).
            _ = try await s.daemon.call("pause")
            try await s.fault("cut", "PATCH", "/api/v1/orders/ord_1")
            _ = try await s.updateOrder("ord_1", ["notes": .string("call first")])
            // Push only (and pull clients): the orders pull comes once the later edit exists.
            let first = try await s.daemon.call(
                "sync", .object(["wait": .bool(true), "collections": .array([.string("clients")])]))
            #expect(first["pushFailures"]?.intValue == 1, "the response was cut: \(first)")
            _ = try await s.updateOrder("ord_1", ["status": .string("ready")])
            try await s.sync()  // the pull sees the server's copy with our notes while that write is still in doubt
            #expect(try s.replica("orders", "ord_1", "status") == .some("ready"), "the later edit survives the pull")
            try await s.sync()
            let server = try await s.serverRecord("orders", "ord_1")
            #expect(server["notes"] as? String == "call first")
            #expect(server["status"] as? String == "ready")
            let outbox = try s.outbox()
            #expect(outbox.isEmpty, "\(outbox)")
            #expect(try await s.admin.counters().patchesApplied == 2, "each change applied once")
        }
    }

    @Test(
        "killed while a PATCH is in flight, edited again while the server is down, restarted: the edit goes out as its own change, not under the old key"
    )
    func sentChangeNeverAbsorbsALaterEdit() async throws {
        try await HostileStack.with("in-flight-kill", config: "retry:\n  base: 1s\n") { s in
            try await s.sync()
            // Slow enough that the kill lands while the request is held, however loaded the machine.
            let plan = #"{"rate":0,"kinds":{},"slow_ms":8000}"#
            _ = try await s.admin.send("PUT", "/admin/faults", json: plan)
            try await s.fault("slow", "PATCH", "/api/v1/orders/ord_2")
            _ = try await s.updateOrder("ord_2", ["notes": .string("first")])
            _ = try await s.daemon.call("sync")
            #expect(try await s.waitForServer { $0.faultsInjected["slow"] == 1 }, "the PATCH reached the server")
            await s.daemon.kill()
            #expect(try await s.waitForServer { $0.patchesApplied == 1 }, "the server applied it after the client died")
            let port = s.server.port
            await s.server.stop()
            try await s.daemon.start()
            _ = try await s.updateOrder("ord_2", ["notes": .string("second")])
            let outbox = try s.outbox()
            #expect(outbox.count == 2, "a new entry, not merged into the sent one: \(outbox)")
            await s.daemon.kill()
            let restarted = try await APIServerProcess(
                database: s.workspace.file("api.sqlite"), orders: 20, port: port,
                logPath: s.workspace.file("api-2.log"))
            defer { restarted.process.signal(SIGKILL) }
            try await s.daemon.start()
            let report = try await s.sync()
            #expect(report["dead"]?.intValue == 0, "\(report)")
            let outboxAfter = try s.outbox()
            #expect(outboxAfter.isEmpty, "\(outboxAfter)")
            let reply = try await restarted.admin.send("GET", "/api/v1/orders/ord_2")
            #expect(try reply.object()["notes"] as? String == "second")
            let counters = try await restarted.admin.counters()
            #expect(counters.idempotentReplays >= 1, "the first change was replayed under its own key")
        }
    }

    @Test(
        "a PATCH answered 401 (the token expired mid-push) stays \"may have been sent\"; an edit made before the token works again is its own change under its own key, after it"
    )
    func changeKeepsItsSentMarkAcrossA401() async throws {
        try await HostileStack.with("in-doubt-401") { s in
            try await s.sync()
            // Paused: only the runs the test asks for, so the outbox is read between them.
            _ = try await s.daemon.call("pause")
            try await s.fault("401", "PATCH", "/api/v1/orders/ord_15")
            _ = try await s.updateOrder("ord_15", ["notes": .string("first")])
            let stopped = try await s.sync()
            #expect(stopped["stop"]?.stringValue?.contains("authentication") == true, "\(stopped)")
            let waiting = try s.outboxEntries("orders", "ord_15")
            #expect(waiting.count == 1 && waiting.first?.sent == true, "still may have been sent: \(waiting)")
            #expect(waiting.first?.state == "pending", "not counted as failed: \(waiting)")
            _ = try await s.updateOrder("ord_15", ["notes": .string("second")])
            let entries = try s.outboxEntries("orders", "ord_15")
            #expect(entries.count == 2, "a new entry, not merged into the one that may have been sent: \(entries)")
            #expect(entries.first?.fields.contains("\"first\"") == true && entries.first?.key == waiting.first?.key)
            #expect(entries.last?.fields.contains("\"second\"") == true && entries.last?.key != waiting.first?.key)
            // The token works again (the 401 was the only one).
            let report = try await s.sync()
            #expect(report["stop"] == nil || report["stop"] == .null, "\(report)")
            #expect(report["dead"]?.intValue == 0, "\(report)")
            #expect(try s.outbox().isEmpty)
            #expect(try await s.serverRecord("orders", "ord_15")["notes"] as? String == "second")
            let writes = try await s.writes("orders", "ord_15")
            #expect(writes.map(\.status) == [401, 200, 200], "\(writes)")
            // Each key went out with one body only: never the old key with the later edit.
            let bodies = Dictionary(grouping: writes) { $0.idempotencyKey ?? "" }.mapValues {
                Set($0.map { "\($0.body ?? .null)" })
            }
            #expect(bodies.values.allSatisfy { $0.count == 1 }, "\(writes)")
            #expect(
                writes.last?.body?["notes"]?.stringValue == "second"
                    && writes.last?.idempotencyKey != waiting.first?.key)
            #expect(try await s.admin.counters().patchesApplied == 2)
        }
    }

    // MARK: 5 and 6: refused changes, 412s

    @Test(
        "a refused note leaves the record; a later edit of the field supersedes it; retry never brings the refused value back"
    )
    func refusedChangeDoesNotHaunt() async throws {
        try await HostileStack.with("refused") { s in
            try await s.sync()
            // Paused: every run below is the test's own (a debounced push would take the fault first under load).
            _ = try await s.daemon.call("pause")
            let original = try await s.serverRecord("orders", "ord_3")["notes"] as? String
            try await s.fault("422", "PATCH", "/api/v1/orders/ord_3")
            _ = try await s.updateOrder("ord_3", ["notes": .string("refused value")])
            let report = try await s.sync()
            #expect(report["dead"]?.intValue == 1, "\(report)")
            #expect(
                try s.replica("orders", "ord_3", "notes") == .some(original), "the replica shows the server's value")
            #expect(try s.outbox().first?.hasPrefix("dead") == true)
            _ = try await s.updateOrder("ord_3", ["notes": .string("fixed value")])
            let outbox = try s.outbox()
            #expect(outbox.count == 1, "the dead entry's field was superseded: \(outbox)")
            try await s.sync()
            _ = try await s.daemon.call("retry")
            try await s.sync()
            #expect(try await s.serverRecord("orders", "ord_3")["notes"] as? String == "fixed value")
            #expect(try s.outbox().isEmpty)
        }
    }

    @Test(
        "a held change (manual policy, waiting for a decision): a later edit of the field supersedes its value; the replica never shows it again, and neither retry nor the decision sends it"
    )
    func heldChangeIsSuperseded() async throws {
        try await HostileStack.with("held", config: "conflicts:\n  orders: manual\n") { s in
            try await s.sync()
            try await s.admin.edit("orders", "ord_14", ["notes": "server notes"])
            _ = try await s.updateOrder(
                "ord_14", ["notes": .string("held value"), "status": .string("awaiting_parts")])
            try await s.sync()  // the PATCH meets a 412; notes changed on both sides: held for a decision
            let status = try await s.daemon.call("status")
            #expect(status["held"]?.intValue == 1 && status["openConflicts"]?.intValue == 1, "\(status)")
            let held = try s.outboxEntries("orders", "ord_14")
            #expect(held.count == 1 && held.first?.state == "held", "\(held)")

            // A later edit of the field while the conflict waits: the held value is superseded at once.
            _ = try await s.updateOrder("ord_14", ["notes": .string("later value")])
            let entries = try s.outboxEntries("orders", "ord_14")
            #expect(entries.allSatisfy { $0.state == "held" }, "the conflict still waits: \(entries)")
            #expect(!entries.contains { $0.fields.contains("held value") }, "the held value is gone: \(entries)")
            #expect(entries.first?.fields.contains("awaiting_parts") == true, "the held status stays: \(entries)")
            #expect(entries.last?.fields.contains("later value") == true, "\(entries)")
            #expect(try s.replica("orders", "ord_14", "notes") == .some("later value"))
            let open = try await s.daemon.call("conflicts", .object(["open": .bool(true)]))
            guard case .array(let conflicts) = open, let conflict = conflicts.first else {
                Issue.record("no open conflict: \(open)")
                return
            }
            #expect(
                conflict["local"]?["notes"]?.stringValue == "later value", "the decision sees the latest: \(conflict)")

            // A pull while it waits shows the later value still; nothing held is sent, and retry sends nothing.
            try await s.sync()
            #expect(try s.replica("orders", "ord_14", "notes") == .some("later value"))
            #expect(try await s.daemon.call("retry")["retried"]?.intValue == 0)
            try await s.sync()
            #expect(try await s.writes("orders", "ord_14").count == 1, "only the PATCH that met the 412")

            // Decided: local. What goes is the held status and the later notes — never the superseded value.
            _ = try await s.daemon.call(
                "resolveConflict", .object(["id": conflict["id"] ?? .null, "keep": .string("local")]))
            try await s.sync()
            let server = try await s.serverRecord("orders", "ord_14")
            #expect(server["notes"] as? String == "later value")
            #expect(server["status"] as? String == "awaiting_parts")
            let writes = try await s.writes("orders", "ord_14")
            #expect(writes.first?.status == 412, "\(writes)")
            for write in writes.dropFirst() {
                #expect(write.body?["notes"]?.stringValue != "held value", "the superseded value went out: \(write)")
                #expect(write.status == 200, "\(write)")
            }
            #expect(try s.replica("orders", "ord_14", "notes") == .some("later value"))
            #expect(try s.outbox().isEmpty)
            #expect(try await s.daemon.call("retry")["retried"]?.intValue == 0)
            try await s.sync()
            #expect(try await s.serverRecord("orders", "ord_14")["notes"] as? String == "later value")
            #expect(try s.auditOutcomes("orders", "ord_14").contains("kept_local"))
        }
    }

    @Test(
        "a change refused and then retried goes out as a new request (a new key) against the current base, not as a replay of the refusal"
    )
    func retriedRefusalIsANewRequest() async throws {
        try await HostileStack.with("retry-refused") { s in
            try await s.sync()
            // repair-api-dev remembers the refusal under its key, as docs/api.md section 5 says every 422 is: the same
            // key again would only get the refusal replayed.
            try await s.fault("422", "PATCH", "/api/v1/orders/ord_4")
            _ = try await s.updateOrder("ord_4", ["status": .string("awaiting_parts")])
            try await s.sync()
            // Edited elsewhere and pulled while the change is dead: the base the retry must go against is version 2.
            try await s.admin.edit("orders", "ord_4", ["notes": "edited elsewhere"])
            try await s.sync()
            #expect(try StoreInspector.versions(s.store)["orders"]?["ord_4"] == 2)
            _ = try await s.daemon.call("retry")
            let report = try await s.sync()
            #expect(report["dead"]?.intValue == 0, "\(report)")
            let server = try await s.serverRecord("orders", "ord_4")
            #expect(server["status"] as? String == "awaiting_parts")
            #expect(server["notes"] as? String == "edited elsewhere")
            let writes = try await s.writes("orders", "ord_4")
            #expect(writes.count == 2, "the refusal and one new request, no 412 in between: \(writes)")
            guard writes.count == 2 else { return }
            #expect(writes[0].status == 422 && writes[0].ifMatchVersion == 1, "\(writes[0])")
            #expect(writes[1].status == 200 && !writes[1].replayed, "\(writes[1])")
            #expect(
                writes[1].idempotencyKey != nil && writes[1].idempotencyKey != writes[0].idempotencyKey, "a new key")
            #expect(writes[1].ifMatchVersion == 2, "against the current base: \(writes[1])")
            #expect(try await s.admin.counters().versionConflicts == 0)
            #expect(try s.outbox().isEmpty)
        }
    }

    @Test("a 412 that does not go away: rebased a few times in the run, then dead with the reason — no endless replay")
    func repeated412IsBounded() async throws {
        try await HostileStack.with("412") { s in
            try await s.sync()
            // Paused: every run below is the test's own (a debounced push would take the fault first under load).
            _ = try await s.daemon.call("pause")
            try await s.fault("412", "PATCH", "/api/v1/orders/ord_5", count: 1000)
            _ = try await s.updateOrder("ord_5", ["notes": .string("never accepted")])
            let report = try await s.sync()
            #expect(report["dead"]?.intValue == 1, "\(report)")
            let served = try await s.admin.counters().faultsInjected["412"] ?? 0
            #expect(served >= 2 && served <= 4, "\(served) PATCHes answered 412 in the run")
            let outbox = try s.outbox()
            #expect(outbox.first?.contains("412") == true, "\(outbox)")
            try await s.sync()
            #expect(try await s.admin.counters().faultsInjected["412"] == served, "a dead change is not sent again")
        }
    }

    // MARK: 7: history going back

    @Test(
        "a record restored to an older version without a tombstone: adopted as the new base (audit log), the local edit rebased onto it, no request loop"
    )
    func historyThatWentBackOnWrite() async throws {
        try await HostileStack.with("rewind-write") { s in
            let before = try await s.serverRecord("orders", "ord_6")
            try await s.admin.edit("orders", "ord_6", ["notes": "v2"])
            try await s.admin.edit("orders", "ord_6", ["notes": "v3"])
            try await s.sync()
            #expect(try StoreInspector.versions(s.store)["orders"]?["ord_6"] == 3)
            let restored = String(decoding: try JSONSerialization.data(withJSONObject: before), as: UTF8.self)
            let reply = try await s.admin.send("PUT", "/admin/records/orders/ord_6?in_feed=false", json: restored)
            #expect(reply.status == 200)
            let patchesBefore = try await s.admin.counters().requests
            _ = try await s.updateOrder("ord_6", ["status": .string("ready")])
            try await s.sync()
            let server = try await s.serverRecord("orders", "ord_6")
            #expect(server["status"] as? String == "ready")
            #expect(server["version"] as? Int == 2, "one write on top of the restored version 1")
            #expect(try s.auditOutcomes("orders", "ord_6").contains("history_rewound"))
            let requests = try await s.admin.counters().requests - patchesBefore
            #expect(requests < 20, "\(requests) requests for one change and a pull")
        }
    }

    @Test(
        "a record restored to an older version shows up in the feed, or is deleted and created again: the replica takes the server's record"
    )
    func historyThatWentBackInTheFeed() async throws {
        try await HostileStack.with("rewind-feed") { s in
            let before = try await s.serverRecord("orders", "ord_7")
            let client = try await s.serverRecord("clients", "cli_2")
            try await s.admin.edit("orders", "ord_7", ["notes": "newer"])
            try await s.admin.edit("clients", "cli_2", ["notes": "newer"])
            try await s.sync()
            let restored = String(decoding: try JSONSerialization.data(withJSONObject: before), as: UTF8.self)
            _ = try await s.admin.send("PUT", "/admin/records/orders/ord_7", json: restored)
            _ = try await s.admin.send("DELETE", "/admin/records/clients/cli_2")
            let recreated = String(decoding: try JSONSerialization.data(withJSONObject: client), as: UTF8.self)
            #expect(try await s.admin.send("POST", "/admin/records/clients", json: recreated).status == 201)
            let report = try await s.sync()
            #expect(report["rewound"]?.intValue == 2, "\(report)")
            #expect(try s.replica("orders", "ord_7", "notes") == .some(before["notes"] as? String))
            #expect(try StoreInspector.versions(s.store)["orders"]?["ord_7"] == before["version"] as? Int)
            #expect(try s.replica("clients", "cli_2", "notes") == .some(client["notes"] as? String))
            #expect(try s.auditOutcomes("orders", "ord_7") == ["history_rewound"])
        }
    }

    // MARK: 8: 410 sweeps

    @Test(
        "after a 410, records deleted during the gap are swept (with their devices); one with a pending change goes to the conflict log; a local message not yet sent stays"
    )
    func resyncSweeps() async throws {
        try await HostileStack.with("sweep", config: "retry:\n  base: 10m\n  cap: 20m\n") { s in
            try await s.sync()
            let devices = try StoreInspector.strings(s.store, "SELECT id FROM devices WHERE order_id = 'ord_8'")
            #expect(!devices.isEmpty)
            try await s.fault("500", "PATCH", "/api/v1/orders/ord_9")
            try await s.fault("500", "POST", "/api/v1/tickets/tkt_1/messages")
            _ = try await s.updateOrder("ord_9", ["notes": .string("pending when it went")])
            let message = try await s.daemon.call(
                "replyToTicket", .object(["ticketId": .string("tkt_1"), "content": .string("not yet sent")]))
            try await s.sync()
            _ = try await s.admin.send("DELETE", "/admin/records/orders/ord_8")
            _ = try await s.admin.send("DELETE", "/admin/records/orders/ord_9")
            _ = try await s.admin.send("POST", "/admin/cursors/expire")
            let report = try await s.sync()
            #expect(report["stop"] == nil || report["stop"] == .null, "\(report)")
            #expect(try s.replica("orders", "ord_8", "id") == nil, "swept")
            for device in devices {
                #expect(try s.replica("devices", device, "id") == nil, "\(device) swept with its order")
            }
            #expect(try s.replica("orders", "ord_9", "id") == nil)
            #expect(try s.auditOutcomes("orders", "ord_9") == ["deleted_remotely"])
            let id = message["id"]?.stringValue ?? ""
            #expect(try s.replica("ticket_messages", id, "content") == .some("not yet sent"), "a local message stays")
            #expect(try StoreInspector.strings(s.store, "SELECT COUNT(*) FROM resync_marks") == ["0"])
        }
    }

    // MARK: 9: Retry-After

    @Test(
        "Retry-After as an HTTP date from a server whose clock is an hour ahead is measured against its Date header: the change goes out after seconds, not an hour"
    )
    func retryAfterDateFromASkewedServer() async throws {
        try await HostileStack.with("retry-after-date") { s in
            try await s.sync()
            // Paused until the wait is read: a debounced push would take the 429 first under load, and this sync's
            // report would then have no wait to show.
            _ = try await s.daemon.call("pause")
            let plan = #"{"rate":0,"kinds":{},"retry_after":2,"retry_after_date":true,"clock_skew_ms":3600000}"#
            #expect(try await s.admin.send("PUT", "/admin/faults", json: plan).status == 200)
            try await s.fault("429", "PATCH", "/api/v1/orders/ord_10")
            _ = try await s.updateOrder("ord_10", ["notes": .string("after the wait")])
            let report = try await s.sync()
            let wait = report["retryAfterMilliseconds"]?.intValue ?? -1
            #expect(wait > 0 && wait <= 3000, "waits \(wait) ms: \(report)")
            _ = try await s.daemon.call("resume")
            // The scheduler comes back by itself when the wait is over.
            let drained = try await s.daemon.waitForStatus(timeout: 30) { DaemonProcess.drained($0) }
            #expect(drained != nil)
            #expect(try await s.serverRecord("orders", "ord_10")["notes"] as? String == "after the wait")
            #expect(try await s.admin.counters().retryAfterViolations == 0)
        }
    }

    @Test(
        "a 503 with Retry-After on a page holds every request until the time is up (the server counts none early); a Retry-After beyond api.retry_after_cap is cut to it"
    )
    func retryAfterOn503AndCapped() async throws {
        try await HostileStack.with(
            "retry-after-503",
            before: { s in
                s.daemon.environment["REPAIRSYNCD_API_RETRY_AFTER_CAP"] = "3s"
            }
        ) { s in
            try await s.sync()
            // Within the cap: honoured as it is. The server notes when the wait ends and counts every request of the
            // token that comes before (docs/api.md section 7.1).
            let plan = #"{"rate":0,"kinds":{},"retry_after":2}"#
            #expect(try await s.admin.send("PUT", "/admin/faults", json: plan).status == 200)
            try await s.fault("503_retry_after", "GET", "/api/v1/devices/changes")
            let successes = try await s.successes()
            let waited = try await s.sync()  // its outcome plans the next run, as a scheduled run's would
            #expect(waited["stop"]?.stringValue?.contains("rate limited") == true, "\(waited)")
            let resumed = try await s.daemon.waitForStatus(timeout: 30) { HostileStack.successes($0) > successes }
            #expect(resumed != nil, "the scheduler came back after the wait and completed a run")
            #expect(try await s.admin.counters().retryAfterViolations == 0, "no request before the 503's time was up")

            // Beyond the cap: two hours cut to 3 s (the server counts the requests after 3 s as early: the cap is the
            // daemon's decision, docs/operations.md api.retry_after_cap).
            let long = #"{"rate":0,"kinds":{},"retry_after":7200}"#
            #expect(try await s.admin.send("PUT", "/admin/faults", json: long).status == 200)
            try await s.fault("503_retry_after", "GET", "/api/v1/devices/changes")
            let started = ContinuousClock.now
            let successesBefore = try await s.successes()
            let stopped = try await s.sync()
            #expect(stopped["stop"]?.stringValue?.contains("rate limited") == true, "\(stopped)")
            let after = try await s.daemon.waitForStatus(timeout: 30) { HostileStack.successes($0) > successesBefore }
            #expect(after != nil, "the scheduler came back after the capped wait and completed a run")
            #expect(ContinuousClock.now - started < .seconds(30), "two hours cut to the 3 s cap")
        }
    }

    @Test(
        "Retry-After as an HTTP date on a pull (a 503 from a server whose clock is an hour ahead) is measured against its Date header: the pull resumes after seconds, by itself"
    )
    func retryAfterDateOnAPull() async throws {
        try await HostileStack.with("retry-after-date-pull") { s in
            try await s.sync()
            let plan = #"{"rate":0,"kinds":{},"retry_after":2,"retry_after_date":true,"clock_skew_ms":3600000}"#
            #expect(try await s.admin.send("PUT", "/admin/faults", json: plan).status == 200)
            try await s.fault("503_retry_after", "GET", "/api/v1/tickets/changes")
            try await s.admin.edit("tickets", "tkt_4", ["subject": "after the wait"])
            let successes = try await s.successes()
            let report = try await s.sync()
            #expect(report["stop"]?.stringValue?.contains("rate limited") == true, "\(report)")
            let wait = report["retryAfterMilliseconds"]?.intValue ?? -1
            #expect(wait > 0 && wait <= 3000, "waits \(wait) ms, not an hour: \(report)")
            let after = try await s.daemon.waitForStatus(timeout: 30) { HostileStack.successes($0) > successes }
            #expect(after != nil, "the scheduler came back by itself after the wait")
            #expect(try s.replica("tickets", "tkt_4", "subject") == .some("after the wait"))
        }
    }

    @Test(
        "a sync waited for over the socket that the server rate-limits is run again by the scheduler after Retry-After")
    func waitedSyncThatIsRateLimitedComesBack() async throws {
        try await HostileStack.with("waited-429") { s in
            try await s.sync()
            let plan = #"{"rate":0,"kinds":{},"retry_after":2}"#
            #expect(try await s.admin.send("PUT", "/admin/faults", json: plan).status == 200)
            try await s.fault("429", "GET", "/api/v1/clients/changes")
            let successesBefore = try await s.successes()
            let report = try await s.sync()
            #expect(report["stop"]?.stringValue?.contains("rate limited") == true, "\(report)")
            // A count of successes, not the 2 s `completed` a slow watcher could miss.
            let after = try await s.daemon.waitForStatus(timeout: 30) { HostileStack.successes($0) > successesBefore }
            #expect(after != nil, "the scheduler came back by itself after the wait")
            #expect(try await s.admin.counters().retryAfterViolations == 0)
        }
    }

    // MARK: 10: only the API decides

    @Test(
        "a proxy's HTML 404, 401 and 403 are not the API's answer: nothing deleted, nothing dead, no stop for a token; the change goes out later",
        arguments: ["html_404", "html_401", "html_403"])
    func proxyPagesDecideNothing(fault: String) async throws {
        try await HostileStack.with("proxy-\(fault)", config: "retry:\n  base: 1s\n  cap: 2s\n") { s in
            try await s.sync()
            try await s.fault(fault, "PATCH", "/api/v1/orders/ord_11")
            _ = try await s.updateOrder("ord_11", ["notes": .string("through the proxy")])
            let report = try await s.sync()
            #expect(report["dead"]?.intValue == 0, "\(report)")
            #expect(report["stop"]?.stringValue?.contains("authentication") != true, "\(report)")
            #expect(try s.replica("orders", "ord_11", "notes") == .some("through the proxy"), "not deleted")
            #expect(try s.auditOutcomes("orders", "ord_11").isEmpty)
            let drained = try await s.daemon.waitForStatus(timeout: 30) { DaemonProcess.drained($0) }
            #expect(drained != nil)
            #expect(try await s.serverRecord("orders", "ord_11")["notes"] as? String == "through the proxy")
        }
    }

    @Test("a proxy's HTML 404 on a changes page is a failure of that collection, not a deletion")
    func proxyPageOnAFeed() async throws {
        try await HostileStack.with("proxy-feed") { s in
            try await s.sync()
            let before = try StoreInspector.versions(s.store)["clients"]?.count ?? 0
            try await s.fault("html_404", "GET", "/api/v1/clients/changes")
            let report = try await s.sync()
            #expect(report["failedCollections"]?["clients"] != nil, "\(report)")
            #expect(try StoreInspector.versions(s.store)["clients"]?.count == before)
        }
    }

    // MARK: 11: older copies

    @Test("a stale page with older copies never overwrites newer rows, in every collection")
    func olderCopiesNeverOverwrite() async throws {
        try await HostileStack.with("stale") { s in
            try await s.sync()
            let message =
                try StoreInspector.strings(s.store, "SELECT id FROM ticket_messages ORDER BY id LIMIT 1").first ?? ""
            #expect(!message.isEmpty)
            try await s.admin.edit("clients", "cli_3", ["notes": "newer client"])
            try await s.admin.edit("tickets", "tkt_3", ["subject": "newer subject"])
            try await s.admin.edit("orders", "ord_12", ["notes": "newer order"])
            try await s.admin.edit("devices", "dev_12", ["diagnosis": "newer diagnosis"])
            try await s.admin.edit("ticket_messages", message, ["content": "newer message"])
            try await s.sync()
            let collections = ["clients", "tickets", "orders", "devices", "ticket_messages"]
            for collection in collections {
                try await s.fault("stale_page", "GET", "/api/v1/\(collection)/changes")
            }
            let report = try await s.sync()
            let served = try await s.admin.counters().faultsInjected["stale_page"] ?? 0
            #expect(served == collections.count, "every collection got its stale page")
            #expect((report["staleCopies"]?.intValue ?? 0) >= collections.count, "\(report)")
            #expect(try s.replica("clients", "cli_3", "notes") == .some("newer client"))
            #expect(try s.replica("tickets", "tkt_3", "subject") == .some("newer subject"))
            #expect(try s.replica("orders", "ord_12", "notes") == .some("newer order"))
            #expect(try s.replica("devices", "dev_12", "diagnosis") == .some("newer diagnosis"))
            #expect(try s.replica("ticket_messages", message, "content") == .some("newer message"))
            let versions = try StoreInspector.versions(s.store)
            #expect(versions["clients"]?["cli_3"] == 2)
            #expect(versions["tickets"]?["tkt_3"] == 2)
            #expect(versions["orders"]?["ord_12"] == 2)
            #expect(versions["devices"]?["dev_12"] == 2)
            #expect(versions["ticket_messages"]?[message] == 2)
        }
    }

    // MARK: 12: rows another program wrote

    @Test(
        "a row another program wrote and has not queued yet is queued by the next run and judged by policy; the later queueChange finds nothing left to queue",
        arguments: ["merge", "server-wins"])
    func unqueuedRowEdits(policy: String) async throws {
        try await HostileStack.with("unqueued-\(policy)", config: "conflicts:\n  orders: \(policy)\n") { s in
            try await s.sync()
            try ExternalStoreWriter.setNotes("written by a shop tool", order: "ord_13", store: s.store)
            try await s.admin.edit("orders", "ord_13", ["status": "in_progress"])
            try await s.sync()
            let queued = try await s.daemon.call(
                "queueChange", .object(["kind": .string("order-updated"), "id": .string("ord_13")]))
            // The run queued the row's edit and judged it (merged and pushed, or dropped): nothing is left to queue,
            // and the answer says why (docs/rpc.md, queueChange).
            #expect(queued["queued"] == .bool(false), "\(queued)")
            #expect(queued["reason"]?.stringValue?.contains("is the server's copy") == true, "\(queued)")
            #expect(queued["outcome"] == .string("on_server"), "\(queued)")
            #expect(try s.outbox().isEmpty)
            try await s.sync()
            let server = try await s.serverRecord("orders", "ord_13")
            #expect(server["status"] as? String == "in_progress")
            if policy == "merge" {
                #expect(server["notes"] as? String == "written by a shop tool", "a change to another field merges")
            } else {
                #expect(server["notes"] as? String != "written by a shop tool")
                #expect(try s.auditOutcomes("orders", "ord_13") == ["kept_remote"], "not overwritten silently")
                #expect(try s.replica("orders", "ord_13", "notes") == .some(server["notes"] as? String))
            }
        }
    }

    @Test(
        "a row another program wrote, queued by a run whose push did not get through: the later queueChange answers \"already queued\" with the change holding it and queues nothing more"
    )
    func unqueuedRowAlreadyQueued() async throws {
        try await HostileStack.with("already-queued", config: "retry:\n  base: 1s\n  cap: 2s\n") { s in
            try await s.sync()
            // Paused: no automatic run (a retry of the change) between the run and the call.
            _ = try await s.daemon.call("pause")
            try await s.fault("500", "PATCH", "/api/v1/orders/ord_16")
            try ExternalStoreWriter.setNotes("written by a shop tool", order: "ord_16", store: s.store)
            let report = try await s.sync()
            #expect(report["pushFailures"]?.intValue == 1, "the run queued the edit and tried it: \(report)")
            let before = try s.outboxEntries("orders", "ord_16")
            #expect(before.count == 1 && before.first?.fields.contains("written by a shop tool") == true, "\(before)")
            let queued = try await s.daemon.call(
                "queueChange", .object(["kind": .string("order-updated"), "id": .string("ord_16")]))
            #expect(queued["queued"] == .bool(true), "\(queued)")
            #expect(queued["reason"]?.stringValue == "already queued", "\(queued)")
            #expect(queued["outcome"] == .string("already_queued"), "\(queued)")
            #expect(queued["seq"]?.intValue == before.first?.seq, "the change holding it: \(queued)")
            #expect(queued["fields"] == .array([.string("notes")]), "\(queued)")
            let after = try s.outboxEntries("orders", "ord_16")
            #expect(after.map(\.seq) == before.map(\.seq), "nothing more queued: \(after)")
            _ = try await s.daemon.call("resume")
            let drained = try await s.daemon.waitForStatus(timeout: 30) { DaemonProcess.drained($0) }
            #expect(drained != nil)
            #expect(try await s.serverRecord("orders", "ord_16")["notes"] as? String == "written by a shop tool")
            #expect(try await s.admin.counters().patchesApplied == 1)
        }
    }

    // MARK: 13: one daemon per store

    @Test(
        "a second daemon with the same configuration refuses to start before touching anything — the store's files and the first one's socket as they were — naming the store and the first one's pid; the first carries on"
    )
    func oneDaemonPerStore() async throws {
        try await HostileStack.with("lock") { s in
            try await s.sync()
            // Paused, and no run in progress: the first daemon writes nothing while the second tries its start.
            _ = try await s.daemon.call("pause")
            let settled = try await s.daemon.waitForStatus(timeout: 30) {
                ["idle", "completed"].contains($0["state"]?.stringValue ?? "")
            }
            #expect(settled != nil)
            let second = try DaemonProcess(
                directory: s.workspace.file("second"), baseURL: s.server.baseURL, token: APIServerProcess.token)
            defer { second.notify.close() }
            // The same file as the first's: the same store and the same control socket.
            try FileManager.default.removeItem(atPath: second.configPath)
            try FileManager.default.copyItem(atPath: s.daemon.configPath, toPath: second.configPath)
            let storeDirectory = (s.store as NSString).deletingLastPathComponent
            let socketDirectory = (s.daemon.socketPath as NSString).deletingLastPathComponent
            let shm: (String) -> Bool = { $0.hasSuffix("-shm") }
            let storeBefore = try DirectorySnapshot(storeDirectory, presenceOnly: shm)
            let socketBefore = try DirectorySnapshot(socketDirectory)
            await #expect(throws: (any Error).self) { try await second.start(timeout: 20) }
            #expect(second.process?.isRunning == false, "it exited")
            let log = second.log()
            #expect(log.contains(s.store), "\(log)")
            #expect(log.contains("pid \(s.daemon.pid)"), "\(log)")
            let storeAfter = try DirectorySnapshot(storeDirectory, presenceOnly: shm)
            #expect(storeAfter == storeBefore, "the store's files: before \(storeBefore); after \(storeAfter)")
            #expect(try DirectorySnapshot(socketDirectory) == socketBefore, "the first one's socket stays as it was")
            #expect(try await s.daemon.call("ping") == .string("pong"))
            _ = try await s.daemon.call("resume")
            let report = try await s.sync()
            #expect(report["stop"] == nil || report["stop"] == .null, "the first one still syncs its store: \(report)")
        }
    }

    // MARK: 14: exactly once over the socket, and discard

    @Test(
        "replyToTicket with the caller's id, called again after a lost reply: one message; the same id with other content is -32002"
    )
    func replyIdIsExactlyOnce() async throws {
        try await HostileStack.with("reply-id") { s in
            try await s.sync()
            // Paused: a debounced push between the two calls would turn the row into the server's copy.
            _ = try await s.daemon.call("pause")
            let id = "5b1f0e2a-8c47-4d8e-9a3b-2f6c1d7e9a01"
            let params = JSONValue.object([
                "ticketId": .string("tkt_1"), "content": .string("ready at 2pm"), "id": .string(id),
            ])
            let first = try await s.daemon.call("replyToTicket", params)
            let again = try await s.daemon.call("replyToTicket", params)
            #expect(first == again, "the retried call answers the same message")
            do {
                _ = try await s.daemon.call(
                    "replyToTicket",
                    .object(["ticketId": .string("tkt_1"), "content": .string("other words"), "id": .string(id)]))
                Issue.record("the same id with other content was accepted")
            } catch ControlClient.Failure.rpc(let error) {
                #expect(error.code == -32002)
            }
            try await s.sync()
            #expect(try await s.admin.counters().messagesCreated == 1)
            #expect(try await s.serverRecord("ticket_messages", id)["content"] as? String == "ready at 2pm")
        }
    }

    @Test(
        "discard: a refused change leaves the outbox, the audit log records it, and the record shows the server's value"
    )
    func discardRestoresTheServersValue() async throws {
        try await HostileStack.with("discard") { s in
            try await s.sync()
            let original = try await s.serverRecord("devices", "dev_3")["diagnosis"] as? String
            try await s.fault("422", "PATCH", "/api/v1/devices/dev_3")
            _ = try await s.daemon.call(
                "updateDevice", .object(["id": .string("dev_3"), "diagnosis": .string("refused")]))
            try await s.sync()
            let seq = try StoreInspector.strings(s.store, "SELECT seq FROM outbox WHERE state = 'dead'").first ?? ""
            let outbox = try s.outbox()
            #expect(!seq.isEmpty, "\(outbox)")
            _ = try await s.daemon.call("discard", .object(["seq": .number(Int(seq) ?? 0)]))
            #expect(try s.outbox().isEmpty)
            #expect(try s.auditOutcomes("devices", "dev_3") == ["discarded"])
            #expect(try s.replica("devices", "dev_3", "diagnosis") == .some(original))
            #expect(try await s.daemon.call("status")["dead"]?.intValue == 0)
        }
    }
}

/// A shop tool writing the replica directly, as `queueChange` expects changes to arrive (and before it calls it).
enum ExternalStoreWriter {
    static func setNotes(_ notes: String, order id: String, store: String) throws {
        try StoreInspector.execute(store, "UPDATE orders SET notes = ? WHERE id = ?", [notes, id])
    }
}
