import BackendTestSupport
import Foundation
import GRDB
import NIOHTTP1
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import Synchronization
import Testing

/// Pushing local changes: exactly once on the server, whatever the network and the server do.
@Suite("Push", .timeLimit(.minutes(2)))
struct PushTests {
    /// The idempotency key of every request the engine sends, in order, as its entry holds it at the moment it goes.
    final class SentKeys: Sendable {
        private let keys = Mutex<[String]>([])
        var all: [String] { keys.withLock { $0 } }

        init(_ h: EngineHarness) {
            let engine = h.engine
            h.recorder.onEvent { [self] event in
                guard case .sending(let seq, _, _) = event,
                    let current = try? engine.outboxEntries().first(where: { $0.seq == seq })
                else { return }
                keys.withLock { $0.append(current.idempotencyKey) }
            }
        }
    }

    @Test(
        "a local change raises the pending count; a push puts it on the server and the count goes back to 0",
        arguments: RunningBackend.Scheme.allCases)
    func pushRoundTrip(scheme: RunningBackend.Scheme) async throws {
        try await EngineHarness.with(scheme: scheme) { h in
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.engine.pendingChangesCount() == 0)

            let entry = try await h.engine.update(
                .devices, id: "dev_3", fields: ["diagnosis": "water damage", "status": "in_repair"])
            #expect(try h.engine.pendingChangesCount() == 1)
            #expect(await h.engine.status.pending == 1)
            #expect(entry.fields == ["diagnosis": "water damage", "status": "in_repair"])
            #expect(try h.local(Device.self, "dev_3")?.diagnosis == "water damage", "the row changes at once")

            let report = await h.engine.sync([])
            #expect(report.pushed == 1)
            #expect(try h.engine.pendingChangesCount() == 0)
            #expect(await h.engine.status.pending == 0)
            let remote = try await h.serverRecord(Device.self, "devices", "dev_3")
            #expect(remote.diagnosis == "water damage")
            #expect(remote.status == .inRepair)
            #expect(try h.local(Device.self, "dev_3")?.version == remote.version, "the reply is the new server copy")
        }
    }

    @Test("several updates of one record coalesce into one PATCH with the union of fields at their latest values")
    func coalescing() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_2", fields: ["notes": "first"])
            try await h.engine.update(.orders, id: "ord_2", fields: ["status": "in_progress"])
            try await h.engine.update(.orders, id: "ord_2", fields: ["notes": "second"])
            let entries = try h.engine.outboxEntries()
            #expect(entries.count == 1)
            #expect(entries.first?.fields == ["notes": "second", "status": "in_progress"])

            let before = try await h.counter("patches_applied")
            #expect(await h.engine.sync([]).pushed == 1)
            #expect(try await h.counter("patches_applied") == before + 1)
            let remote = try await h.serverRecord(Order.self, "orders", "ord_2")
            #expect(remote.notes == "second")
            #expect(remote.status == .inProgress)
        }
    }

    @Test(
        "a PATCH answered 200 without the values sent (a server that acknowledges and does not apply): its copy stands, the edit is in the audit log as server_overrode, the run counts it"
    )
    func acknowledgedWithoutTheValuesSent() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try await h.serverRecord(Order.self, "orders", "ord_2")
            try await h.engine.update(
                .orders, id: "ord_2", fields: ["notes": "call the client", "status": before.status.rawValue])
            let defects = try await h.backend.send(.PUT, "/admin/defects", json: #"{"defects":["drop_patch_values"]}"#)
            #expect(defects.status == 200)
            let report = await h.engine.sync([])
            _ = try await h.backend.send(.DELETE, "/admin/defects")
            #expect(report.pushed == 1 && report.conflicts == 1, "\(report)")
            #expect(try h.engine.pendingChangesCount() == 0, "acknowledged: not sent again")
            let remote = try await h.serverRecord(Order.self, "orders", "ord_2")
            #expect(remote.version == before.version + 1 && remote.notes == before.notes)
            #expect(try h.local(Order.self, "ord_2")?.notes == before.notes, "the server's copy stands")
            let log = try h.engine.conflicts()
            #expect(log.count == 1, "\(log)")
            #expect(log.first?.outcome == .serverOverrode && log.first?.fields == ["notes"], "only the field not kept")
            #expect(log.first?.local["notes"] == "call the client", "the value sent is kept")
            #expect(log.first?.local.keys.sorted() == ["notes"], "only what was not kept: the status was")
            #expect(log.first?.isOpen == false)
            // A server that keeps what it is sent: nothing more in the log.
            try await h.engine.update(.orders, id: "ord_2", fields: ["notes": "call the client"])
            #expect(await h.engine.sync([]).conflicts == 0)
            #expect(try h.engine.conflicts().count == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_2").notes == "call the client")
        }
    }

    @Test("messages never coalesce and reach the server in the order they were written")
    func messagesInOrder() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let first = try await h.engine.createTicketMessage(ticketId: "tkt_2", content: "We have your phone.")
            let second = try await h.engine.createTicketMessage(ticketId: "tkt_2", content: "It is ready.")
            #expect(try h.engine.pendingChangesCount() == 2)
            #expect(await h.engine.sync([]).pushed == 2)

            let pushed = h.recorder.events.compactMap { event -> String? in
                if case .pushed(_, .ticketMessages, let id) = event { return id } else { return nil }
            }
            #expect(pushed == [first.id, second.id])
            let one = try await h.serverRecord(TicketMessage.self, "ticket_messages", first.id)
            let two = try await h.serverRecord(TicketMessage.self, "ticket_messages", second.id)
            #expect(one.content == "We have your phone.")
            #expect(two.content == "It is ready.")
        }
    }

    @Test(
        "a PATCH applied by the server whose reply is lost is replayed with the same key: one change on the server",
        arguments: RunningBackend.Scheme.allCases)
    func lostPatchResponse(scheme: RunningBackend.Scheme) async throws {
        try await EngineHarness.with(scheme: scheme) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let entry = try await h.engine.update(.orders, id: "ord_6", fields: ["notes": "cut off"])
            let before = try await h.counters()
            try await h.fault("cut", method: "PATCH", path: "/api/v1/orders/ord_6")

            let report = await h.engine.sync([])
            #expect(report.pushed == 1, "\(report)")
            #expect(try h.engine.pendingChangesCount() == 0)
            let after = try await h.counters()
            #expect(after["patches_applied"] as? Int == (before["patches_applied"] as? Int ?? 0) + 1)
            #expect(after["idempotent_replays"] as? Int == (before["idempotent_replays"] as? Int ?? 0) + 1)
            let remote = try await h.serverRecord(Order.self, "orders", "ord_6")
            #expect(remote.notes == "cut off")
            #expect(try h.local(Order.self, "ord_6")?.version == remote.version)
            // The replay used the key made at enqueue time.
            #expect(!entry.idempotencyKey.isEmpty)
        }
    }

    @Test("a new message whose POST reply was cut is created exactly once")
    func lostMessageResponse() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let created = try await h.counter("messages_created")
            let replays = try await h.counter("idempotent_replays")
            let message = try await h.engine.createTicketMessage(ticketId: "tkt_1", content: "Parts arrive Monday.")
            try await h.fault("cut", method: "POST", path: "/api/v1/tickets/tkt_1/messages")

            let report = await h.engine.sync([.ticketMessages])
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(try h.engine.pendingChangesCount() == 0)
            #expect(try await h.counter("messages_created") == created + 1)
            #expect(try await h.counter("idempotent_replays") == replays + 1, "the retry was answered as a replay")
            let remote = try await h.serverRecord(TicketMessage.self, "ticket_messages", message.id)
            #expect(remote.content == "Parts arrive Monday.")
            let localCopies = try await h.store.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ticket_messages WHERE content = 'Parts arrive Monday.'")
            }
            #expect(localCopies == 1)
        }
    }

    @Test(
        "a message under an id the server holds for another message is refused and stays dead, visible; the pull that brings the other message does not settle it (seed 50330)",
        arguments: [false, true])
    func messageUnderAnotherMessagesId(pushedFirst: Bool) async throws {
        // Retries far apart: a POST that failed waits past the pull that follows it.
        let configuration = EngineConfiguration(
            pageSize: 40, retry: RetryPolicy(base: .seconds(600), cap: .seconds(1200), maxAttempts: 10),
            completedHold: .milliseconds(50))
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let id = "6ff0033e-7f47-0637-c0f1-2a9d7edd5390"
            // Another client posted a message under this id; this replica has not pulled it yet.
            let posted = try await h.backend.send(
                .POST, "/api/v1/tickets/tkt_1/messages",
                json: #"{"id":"\#(id)","content":"theirs","is_internal":false}"#,
                headers: [("Idempotency-Key", "another-client-1")])
            #expect(posted.status == 201)
            // A caller gives the same id for a message of its own: nothing here can tell that it is taken.
            _ = try await h.engine.createTicketMessage(ticketId: "tkt_1", content: "ours", id: id)

            if pushedFirst {
                // The push is refused (409 duplicate_id), then the pull brings the other message.
                let report = await h.engine.sync([.ticketMessages])
                #expect(report.dead == 1)
                let entry = try #require(
                    try h.engine.outboxEntries().first { $0.recordId == id }, "our message is not silently settled")
                #expect(entry.state == .dead)
                #expect(entry.fields["content"] == .some("ours"))
                #expect(entry.lastError?.contains("duplicate_id") == true, "\(entry.lastError ?? "")")
                #expect(await h.engine.status.dead == 1)
            } else {
                // The pull brings the other message while ours still waits (its POST failed on the way).
                try await h.fault("500", method: "POST", path: "/api/v1/tickets/tkt_1/messages")
                let report = await h.engine.sync([.ticketMessages])
                #expect(report.pushFailures == 1)
                #expect(report.pulled["ticket_messages"] ?? 0 >= 1, "the pull ran: \(report)")
                let entry = try #require(
                    try h.engine.outboxEntries().first { $0.recordId == id }, "our message is not silently settled")
                #expect(entry.state == .failed, "still to be sent: \(entry)")
                #expect(entry.fields["content"] == .some("ours"))
                #expect(try h.engine.pendingChangesCount() == 1)
            }
            #expect(try h.local(TicketMessage.self, id)?.content == "theirs", "the replica shows the server's message")
            #expect(try await h.serverRecord(TicketMessage.self, "ticket_messages", id).content == "theirs")
        }
    }

    @Test("a transient failure keeps the key, counts the attempt, and the change goes through on retry")
    func transientRetry() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let entry = try await h.engine.update(.orders, id: "ord_7", fields: ["notes": "after a 503"])
            try await h.fault("503", method: "PATCH", path: "/api/v1/orders/ord_7", count: 2)
            let keys = SentKeys(h)
            let report = await h.engine.sync([])
            #expect(report.pushed == 1)
            #expect(report.pushFailures == 2)
            #expect(keys.all == Array(repeating: entry.idempotencyKey, count: 3))
            #expect(try await h.serverRecord(Order.self, "orders", "ord_7").notes == "after a 503")
        }
    }

    @Test(
        "a PATCH answered 200 with the record at the version it was written on (a proxy's cached answer) acknowledges nothing: tried again under its key, it reaches the server, nothing in the audit log"
    )
    func cachedAnswerAcknowledgesNothing() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let entry = try await h.engine.update(.orders, id: "ord_8", fields: ["notes": "behind a cache"])
            try await h.fault("cached_answer", method: "PATCH", path: "/api/v1/orders/ord_8")
            let keys = SentKeys(h)
            let before = try await h.counter("patches_applied")
            let report = await h.engine.sync([])
            #expect(report.pushFailures == 1 && report.pushed == 1, "\(report)")
            #expect(keys.all == [entry.idempotencyKey, entry.idempotencyKey])
            #expect(try await h.counter("patches_applied") == before + 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").notes == "behind a cache")
            #expect(try h.local(Order.self, "ord_8")?.notes == "behind a cache")
            #expect(try h.engine.conflicts().isEmpty, "an answer that was no answer is not the server overriding")
        }
    }

    @Test("after N transient failures an entry is dead, visible, does not block others, and can be retried")
    func deadAfterAttempts() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(maxAttempts: 3)) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_8", fields: ["notes": "keeps failing"])
            try await h.engine.update(.orders, id: "ord_9", fields: ["notes": "fine"])
            try await h.fault("500", method: "PATCH", path: "/api/v1/orders/ord_8", count: 3)

            let report = await h.engine.sync([])
            #expect(report.dead == 1)
            #expect(report.pushed == 1)
            let dead = try #require(try h.engine.outboxEntries().first)
            #expect(dead.state == .dead)
            #expect(dead.attempts == 3)
            #expect(dead.lastError?.contains("500") == true)
            #expect(await h.engine.status.dead == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_9").notes == "fine")

            try await h.engine.retryDead(seq: dead.seq)
            #expect(await h.engine.sync([]).pushed == 1)
            #expect(try h.engine.outboxEntries().isEmpty)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").notes == "keeps failing")
        }
    }

    @Test(
        "an outage — the API's 503s without Retry-After — never uses up a change's attempts, however long: it goes once the server is back"
    )
    func outageUsesNoAttempts() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(maxAttempts: 3)) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_8", fields: ["notes": "through the outage"])
            // The API's own 503s for twice the attempts a change has, its health check answering all along (as it
            // may through a maintenance window).
            try await h.fault("503", method: "PATCH", path: "/api/v1/orders/ord_8", count: 6)
            var pushed = 0
            for _ in 0..<8 where pushed == 0 {
                let report = await h.engine.sync([])
                #expect(report.dead == 0, "\(report)")
                pushed += report.pushed
            }
            #expect(pushed == 1)
            #expect(try h.engine.outboxEntries().isEmpty)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").notes == "through the outage")
        }
    }

    /// Found by a review: a firewall answering one change's text with its HTML 403 page, every time, while the API
    /// took the others. Read as an outage, it was retried for ever — "failed", neither dead nor discardable.
    @Test(
        "a proxy's page for one change alone, while the API answers its health check, uses up that change's attempts: dead and visible; the others go"
    )
    func proxyPageForOneChangeEndsDead() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(maxAttempts: 3)) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_9", fields: ["notes": "DROP TABLE is in this note"])
            try await h.engine.update(.orders, id: "ord_10", fields: ["notes": "an ordinary note"])
            try await h.fault("html_403", method: "PATCH", path: "/api/v1/orders/ord_9", count: 1_000)
            var dead = 0
            var pushed = 0
            for _ in 0..<6 where dead == 0 {
                let report = await h.engine.sync([])
                dead += report.dead
                pushed += report.pushed
            }
            #expect(dead == 1 && pushed == 1)
            let entry = try #require(try h.engine.outboxEntries().first)
            #expect(entry.recordId == "ord_9" && entry.state == .dead, "\(entry)")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_10").notes == "an ordinary note")
        }
    }

    @Test(
        "a push-only run that met the server down for every change it tried (503s, a proxy's pages) is no success: the status names the failure and the last success stays; a change failing on its own is no failed run"
    )
    func pushOnlyRunWithNothingThroughIsNoSuccess() async throws {
        try await EngineHarness.with(configuration: EngineHarness.hourlyRetries) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let lastSuccess = try #require(await h.engine.status.lastSuccessAt)
            try await h.engine.update(.orders, id: "ord_8", fields: ["notes": "during the outage"])
            try await h.fault("503", method: "PATCH", path: "/api/v1/orders/ord_8", count: 1)

            let failed = await h.engine.sync([])
            #expect(!failed.succeeded && failed.pushFailures == 1 && failed.pushed == 0, "\(failed)")
            #expect(failed.stop?.contains("no change could be pushed") == true, "\(failed)")
            #expect(failed.stop?.contains("503") == true, "the server's answer is named: \(failed)")
            let status = await h.engine.status
            #expect(status.lastSuccessAt == lastSuccess)
            #expect(status.phase.name == "error", "\(status.phase)")
            // A run with nothing due is no failure: nothing was tried.
            #expect(await h.engine.sync([]).succeeded)

            // A change failing on its own (a 500) while the server works is that change's retry, not a failed run:
            // otherwise one such change would bring a full retry run after each of its attempts.
            try await h.engine.update(.orders, id: "ord_9", fields: ["notes": "refused by a bug"])
            try await h.fault("500", method: "PATCH", path: "/api/v1/orders/ord_9", count: 1)
            let own = await h.engine.sync([])
            #expect(own.succeeded && own.pushFailures == 1 && own.pushed == 0, "\(own)")
        }
    }

    /// Edits ord_8 with `fields` while the server applies the PATCH and its answer is cut, twice — with two attempts
    /// configured, the change is given up on, in doubt — and returns that dead entry.
    @discardableResult
    static func giveUpInDoubt(_ h: EngineHarness, _ fields: FieldValues) async throws -> OutboxEntry {
        try await h.fault("cut", method: "PATCH", path: "/api/v1/orders/ord_8", count: 2)
        try await h.engine.update(.orders, id: "ord_8", fields: fields)
        #expect(await h.engine.sync([]).dead == 1, "applied twice over, answers cut: given up, in doubt")
        return try #require(try h.engine.outboxEntries().first)
    }

    @Test(
        "a change given up on in doubt leaves the record as its base shows it; a later edit's 412 is no conflict (seed 1863)"
    )
    func givenUpInDoubtIsNoOnesEdit() async throws {
        let configuration = EngineHarness.configuration(policies: [.orders: .clientWins], maxAttempts: 2)
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try #require(try h.local(Order.self, "ord_8"))
            let dead = try await Self.giveUpInDoubt(h, ["notes": "mine"])
            #expect(dead.state == .dead && dead.sent, "\(dead)")
            // Like a refused change, the dead one is no longer shown in the record.
            #expect(try h.local(Order.self, "ord_8")?.notes == before.notes)

            // A later edit of another field goes out against the old version: 412, whose `current` holds our own
            // notes. That is not someone else's edit: no conflict, and the dead change is still there, in doubt.
            let status: OrderStatus = before.status == .awaitingParts ? .ready : .awaitingParts
            try await h.engine.update(.orders, id: "ord_8", fields: ["status": status.rawValue])
            let run = await h.engine.sync([])
            let left = try h.engine.outboxEntries()
            #expect(run.pushed == 1 && run.conflicts == 0, "\(run) \(left)")
            let conflicts = try h.engine.conflicts()
            #expect(conflicts.isEmpty, "\(conflicts)")
            let server = try await h.serverRecord(Order.self, "orders", "ord_8")
            #expect(server.notes == "mine" && server.status == status)
            #expect(try h.engine.outboxEntries().map(\.seq) == [dead.seq])
        }
    }

    @Test(
        "a change discarded while in doubt is still our own write: a later edit's 412 under server-wins keeps the edit (seed 785)"
    )
    func discardedInDoubtIsOurOwnWrite() async throws {
        let configuration = EngineHarness.configuration(policies: [.orders: .serverWins], maxAttempts: 2)
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try #require(try h.local(Order.self, "ord_8"))
            let dead = try await Self.giveUpInDoubt(h, ["notes": "mine"])
            // Discarded: never sent again — but it may have been applied (it was: the answers were cut).
            _ = try await h.engine.discard(seq: dead.seq)
            #expect(try h.engine.outboxEntries().isEmpty)

            // The later edit goes out against the base it was made on: 412, and `current` holds the discarded notes.
            // Under server-wins a remote edit would drop our status; our own write must not.
            let status: OrderStatus = before.status == .awaitingParts ? .ready : .awaitingParts
            try await h.engine.update(.orders, id: "ord_8", fields: ["status": status.rawValue])
            let run = await h.engine.sync([])
            #expect(run.pushed == 1 && run.conflicts == 0, "\(run)")
            let decided = try h.engine.conflicts().filter { $0.outcome != .discarded }
            #expect(decided.isEmpty, "\(decided)")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").status == status)
            #expect(try h.local(Order.self, "ord_8")?.status == status)
        }
    }

    @Test(
        "a change given up on in doubt, replaced by another program's unqueued write of its field: the pull that brings our own write is no conflict (seed 9409)"
    )
    func givenUpInDoubtReplacedByAToolWrite() async throws {
        let configuration = EngineHarness.configuration(policies: [.orders: .clientWins], maxAttempts: 2)
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try #require(try h.local(Order.self, "ord_8"))
            let ours: OrderStatus = before.status == .awaitingParts ? .ready : .awaitingParts
            try await Self.giveUpInDoubt(h, ["status": ours.rawValue])
            // While the next run pulls, a shop tool writes the status into the row and never queues it. The page
            // brings the server's copy — our own write, applied — and the rebase queues the tool's value first,
            // which replaces the dead entry: its value must still count as ours when the copy is judged.
            let wrote = h.recorder.once(when: { if case .pageReceived(.orders, _, _) = $0 { true } else { false } }) {
                try? h.writeRow("orders", "ord_8", ["status": OrderStatus.collected.rawValue])
            }
            let run = await h.engine.sync([.orders])
            #expect(wrote.fired)
            #expect(run.succeeded, "\(run)")
            let conflicts = try h.engine.conflicts()
            #expect(conflicts.isEmpty, "our own write taken for another user's: \(conflicts)")
            // The tool's value, queued by that pull, goes with the next run.
            #expect(await h.engine.sync([]).pushed == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").status == .collected)
        }
    }

    @Test(
        "a change in doubt replaced by a later edit of its field is still our own write: the later edit survives a 412 under server-wins (seed 19)"
    )
    func supersededInDoubtIsOurOwnWrite() async throws {
        let configuration = EngineHarness.configuration(policies: [.orders: .serverWins], maxAttempts: 2)
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try #require(try h.local(Order.self, "ord_8"))
            let first: OrderStatus = before.status == .awaitingParts ? .ready : .awaitingParts
            let second: OrderStatus = before.status == .collected ? .cancelled : .collected
            try await Self.giveUpInDoubt(h, ["status": first.rawValue])
            // The person sets the status again: the dead change's only field is replaced, so it goes.
            try await h.engine.update(.orders, id: "ord_8", fields: ["status": second.rawValue])
            let entries = try h.engine.outboxEntries()
            #expect(entries.count == 1 && entries.first?.fields["status"] == .some(second.rawValue), "\(entries)")

            // Its If-Match is the old version: 412 with our own first status. Not another user's edit.
            let run = await h.engine.sync([])
            #expect(run.pushed == 1 && run.conflicts == 0, "\(run)")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").status == second)
            #expect(try h.local(Order.self, "ord_8")?.status == second)
            let decided = try h.engine.conflicts()
            #expect(decided.isEmpty, "\(decided)")
        }
    }

    @Test(
        "an edit that puts a field back, behind a change in doubt, survives a stale copy of the record at its base (seed 4447)"
    )
    func restoringEditSurvivesStaleCopy() async throws {
        // Retries an hour apart: the change in doubt, and the edit behind it, wait while the orders are pulled.
        let hourly = EngineHarness.hourlyRetries
        try await EngineHarness.with(configuration: hourly) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let before = try #require(try h.local(Order.self, "ord_8"))
            let other: OrderStatus = before.status == .ready ? .awaitingParts : .ready
            // Applied by the server, its answer cut: in doubt, to be replayed in an hour.
            try await h.fault("cut", method: "PATCH", path: "/api/v1/orders/ord_8")
            try await h.engine.update(.orders, id: "ord_8", fields: ["status": other.rawValue])
            #expect(await h.engine.sync([]).pushed == 0)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").status == other)
            // The status put back: a change of its own (the first may have been applied), behind the first.
            try await h.engine.update(.orders, id: "ord_8", fields: ["status": before.status.rawValue])

            // A stale cached page shows ord_8 at its base, before the write in doubt: the edit equals that copy, but
            // the server may hold the other value (it does), so the edit is not "already there".
            try await h.fault("stale_page", method: "GET", path: "/api/v1/orders/changes")
            _ = await h.engine.sync([.orders])
            let left = try h.engine.outboxEntries()
            #expect(left.contains { $0.fields["status"] == .some(before.status.rawValue) }, "\(left)")

            // Restarted when the retry is due: the write in doubt is settled by its replay, then the edit goes.
            let later = try h.reopenedEngine(
                configuration: hourly, clock: SystemEngineClock(skewMilliseconds: 2 * 3_600_000))
            #expect(await later.sync([.orders]).pushed == 2)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").status == before.status)
            #expect(try later.outboxEntries().isEmpty)
            #expect(try later.conflicts().isEmpty)
        }
    }

    @Test(
        "a replayed answer to a write the server has since put back is not taken as the record: the record as it is now is (seed 4311)"
    )
    func replayAfterARewind() async throws {
        let hourly = EngineHarness.hourlyRetries
        try await EngineHarness.with(configuration: hourly) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let original = try await h.backend.get("/api/v1/devices/dev_3").object()
            // Applied by the server, its answer cut: in doubt, to be replayed in an hour.
            try await h.fault("cut", method: "PATCH", path: "/api/v1/devices/dev_3")
            try await h.engine.update(.devices, id: "dev_3", fields: ["diagnosis": "water damage"])
            #expect(await h.engine.sync([]).pushed == 0)
            // The server is put back to the record as it was (a restore), announced in the feed, and pulled.
            try await h.serverRestore("devices", original)
            _ = await h.engine.sync([.devices])

            // The replay answers 200 with the record as the write left it, a version the server no longer has.
            let later = try h.reopenedEngine(
                configuration: hourly, clock: SystemEngineClock(skewMilliseconds: 2 * 3_600_000))
            #expect(await later.sync([]).pushed == 1)
            let server = try await h.serverRecord(Device.self, "devices", "dev_3")
            let local = try #require(try h.local(Device.self, "dev_3"))
            #expect(local.version == server.version && local.diagnosis == server.diagnosis, "\(local) ≠ \(server)")
            #expect(try later.conflicts().contains { $0.recordId == "dev_3" && $0.outcome == .historyRewound })
            #expect(try later.outboxEntries().isEmpty)
        }
    }

    @Test(
        "a replayed 412 is not taken as the record after the record was created again: the record as it is now is (seed 89429)"
    )
    func replayed412AfterARecreation() async throws {
        let hourly = EngineHarness.hourlyRetries
        try await EngineHarness.with(configuration: hourly) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let original = try await h.backend.get("/api/v1/devices/dev_3").object()
            // Another user sets the diagnosis; then ours, the same, is refused (412: its If-Match is the old version),
            // the answer cut: in doubt, to be replayed in an hour.
            _ = try await h.serverEdit("devices", "dev_3", #"{"diagnosis":"water damage"}"#)
            try await h.fault("cut", method: "PATCH", path: "/api/v1/devices/dev_3")
            try await h.engine.update(.devices, id: "dev_3", fields: ["diagnosis": "water damage"])
            #expect(await h.engine.sync([]).pushed == 0)
            // The device is deleted and created again as it first was (version 1), announced in the feed, and pulled.
            var recreated = original
            recreated["version"] = 1
            recreated["created_at"] = Timestamp.now().rfc3339
            recreated["updated_at"] = Timestamp.now().rfc3339
            try await h.serverRestore("devices", recreated)
            _ = await h.engine.sync([.devices])

            // The replay answers 412 with the record as it was when the write was refused: the other user's version,
            // higher than the new record's, and with our value. Taken, it would settle our edit and keep that copy.
            let later = try h.reopenedEngine(
                configuration: hourly, clock: SystemEngineClock(skewMilliseconds: 2 * 3_600_000))
            _ = await later.sync([])
            let server = try await h.serverRecord(Device.self, "devices", "dev_3")
            let local = try #require(try h.local(Device.self, "dev_3"))
            #expect(local.version == server.version && local.diagnosis == server.diagnosis, "\(local) ≠ \(server)")
            #expect(server.diagnosis == "water damage", "our edit reached the new record: \(server)")
            #expect(try later.outboxEntries().isEmpty)
        }
    }

    @Test("429 with Retry-After: nothing is sent before the time is up, nothing is dropped, then it goes through")
    func rateLimited() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            // Ten seconds, so that "at once" is still within the wait on a machine loaded by a parallel build (3 s was
            // not, once).
            try await h.faultPlan(#"{"rate":0,"kinds":{},"retry_after":10,"in_flight_grace_ms":0}"#)
            try await h.engine.update(.orders, id: "ord_10", fields: ["notes": "after the wait"])
            try await h.fault("429", method: "PATCH", path: "/api/v1/orders/ord_10")

            let limited = await h.engine.sync([.orders])
            #expect(limited.stop?.contains("rate limited") == true, "\(limited.stop ?? "")")
            let entry = try #require(try h.engine.outboxEntries().first)
            #expect(entry.state == .failed)
            #expect(try h.engine.pendingChangesCount() == 1)

            // Asking again at once sends nothing at all: the engine waits as it was told.
            let requests = try await h.counter("requests")
            let early = await h.engine.sync([.orders])
            #expect(!early.succeeded)
            #expect(try await h.counter("requests") == requests + 1, "only the counters request itself")

            // Once the time is up, the change goes through; the server saw no request too early.
            // (On a loaded machine the gate may already be over: then only the entry's own time is left.)
            let gate = h.engine.api.remainingWait ?? .zero
            let entryWait = Duration.milliseconds(
                try #require(entry.nextAttemptAt).millisecondsSince1970 - Timestamp.now().millisecondsSince1970)
            try await Task.sleep(for: max(gate, entryWait) + .milliseconds(20))
            let report = await h.engine.sync([.orders])
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(report.pushed == 1)
            #expect(try await h.counter("retry_after_violations") == 0)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_10").notes == "after the wait")
        }
    }

    @Test("401 stops the whole run with an authentication error and marks nothing failed")
    func unauthorized() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_11", fields: ["notes": "needs a token"])
            try await h.engine.update(.orders, id: "ord_12", fields: ["notes": "also waits"])
            try await h.serverEdit("orders", "ord_13", #"{"notes":"not pulled yet"}"#)
            try await h.fault("401", method: "PATCH")

            let report = await h.engine.performFullSync()
            #expect(!report.succeeded)
            #expect(await h.engine.status.phase == .error("authentication failed"))
            // The two changes are in flight together: the one that met the 401 stays, the other may have gone through.
            let entries = try h.engine.outboxEntries()
            #expect((1...2).contains(entries.count))
            #expect(entries.contains { $0.recordId == "ord_11" || $0.recordId == "ord_12" })
            #expect(entries.allSatisfy { $0.state == .pending && $0.attempts == 0 })
            #expect(try h.local(Order.self, "ord_13")?.notes != "not pulled yet", "the run stopped before pulling")

            let retried = await h.engine.performFullSync()
            #expect(retried.succeeded)
            #expect(retried.pushed == entries.count)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_11").notes == "needs a token")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_12").notes == "also waits")
        }
    }

    @Test("422 makes that change dead with the server's message; the changes behind it still go")
    func rejected() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            // Another program wrote a status this server does not accept, then queued the change.
            try h.writeRow("orders", "ord_14", ["status": "teleported"])
            let queued = try await h.engine.queueChange(.orderUpdated, id: "ord_14")
            guard case .queued(_, let fields) = queued else {
                Issue.record("not queued: \(queued)")
                return
            }
            #expect(fields == ["status"])
            try await h.engine.update(.orders, id: "ord_15", fields: ["notes": "behind the bad one"])

            let report = await h.engine.sync([])
            #expect(report.dead == 1)
            #expect(report.pushed == 1)
            let dead = try #require(try h.engine.outboxEntries().first { $0.recordId == "ord_14" })
            #expect(dead.state == .dead)
            #expect(dead.lastError?.contains("is not a status this server accepts") == true, "\(dead.lastError ?? "")")
            #expect(try h.engine.pendingChangesCount() == 0, "dead changes are not pending")
            #expect(await h.engine.status.dead == 1)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_15").notes == "behind the bad one")
        }
    }

    @Test("an edit made while its record is being pushed is kept and pushed next, never overwritten by the reply")
    func editDuringPush() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_5", fields: ["notes": "first"])
            let engine = h.engine
            let edited = h.recorder.once(when: { if case .sending(_, .orders, "ord_5") = $0 { true } else { false } }) {
                _ = try? engine.changes.update(.orders, id: "ord_5", fields: ["notes": "second"])
            }
            let report = await h.engine.sync([])
            #expect(edited.fired)
            #expect(report.pushed == 2, "the in-flight change, then the one made meanwhile")
            #expect(try h.local(Order.self, "ord_5")?.notes == "second")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_5").notes == "second")
            #expect(try h.engine.pendingChangesCount() == 0)
        }
    }

    @Test(
        "a change refused after a later edit of the same field was made: the later value wins, and a retry never sends the older one after it"
    )
    func refusedAfterALaterEdit() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            // dev_3's change carries diagnosis and resolution; while it is in flight the diagnosis is edited again
            // (a new entry: the first may have reached the server), and the server refuses the first.
            try await h.engine.update(
                .devices, id: "dev_3", fields: ["diagnosis": "older", "resolution": "replaced screen"])
            try await h.fault("422", method: "PATCH", path: "/api/v1/devices/dev_3")
            let engine = h.engine
            let edited = h.recorder.once(when: { if case .sending(_, .devices, "dev_3") = $0 { true } else { false } })
            {
                _ = try? engine.changes.update(.devices, id: "dev_3", fields: ["diagnosis": "newer"])
            }
            let report = await h.engine.sync([])
            #expect(edited.fired)
            #expect(report.dead == 1)
            #expect(try await h.serverRecord(Device.self, "devices", "dev_3").diagnosis == "newer")
            // The dead change keeps only what no later edit replaced.
            let dead = try #require(try h.engine.outboxEntries().first { $0.recordId == "dev_3" && $0.state == .dead })
            #expect(dead.fields == ["resolution": "replaced screen"], "\(dead.fields)")
            try await h.engine.retryDead(seq: dead.seq)
            #expect(await h.engine.sync([]).succeeded)
            let server = try await h.serverRecord(Device.self, "devices", "dev_3")
            #expect(server.diagnosis == "newer", "the retried change did not bring the older value back")
            #expect(server.resolution == "replaced screen")
            #expect(try h.local(Device.self, "dev_3")?.diagnosis == "newer")
            #expect(try h.engine.outboxEntries().isEmpty)
        }
    }

    @Test(
        "a change given up on after a later edit of the same field was made: the later value wins, and a retry never sends the older one after it (seed 703)"
    )
    func givenUpAfterALaterEdit() async throws {
        try await EngineHarness.with(configuration: EngineHarness.configuration(maxAttempts: 2)) { h in
            #expect(await h.engine.performFullSync().succeeded)
            // ord_8's change carries status and notes; while it is in flight the status is edited again (a new entry:
            // the first may have reached the server). The first never gets through (500 twice, a failure of its
            // own: given up on).
            try await h.engine.update(.orders, id: "ord_8", fields: ["status": "awaiting_parts", "notes": "older"])
            try await h.fault("500", method: "PATCH", path: "/api/v1/orders/ord_8", count: 2)
            let engine = h.engine
            let edited = h.recorder.once(when: { if case .sending(_, .orders, "ord_8") = $0 { true } else { false } }) {
                _ = try? engine.changes.update(.orders, id: "ord_8", fields: ["status": "ready"])
            }
            let report = await h.engine.sync([])
            #expect(edited.fired)
            #expect(report.dead == 1 && report.pushed == 1, "\(report)")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_8").status == .ready)
            // The dead change keeps only what no later edit replaced: the later change went (and is gone from the
            // outbox) before anyone retried this one.
            let dead = try #require(try h.engine.outboxEntries().first { $0.state == .dead })
            #expect(dead.fields == ["notes": "older"], "\(dead.fields)")
            try await h.engine.retryDead(seq: dead.seq)
            #expect(await h.engine.sync([]).succeeded)
            let server = try await h.serverRecord(Order.self, "orders", "ord_8")
            #expect(server.status == .ready, "the retried change did not bring the older status back")
            #expect(server.notes == "older")
            #expect(try h.engine.outboxEntries().isEmpty)
        }
    }

    @Test("an edit to a record whose change waits later in the same run is pushed, not lost with the older value")
    func editWhileWaitingInTheRun() async throws {
        // One change in flight at a time, so ord_6's entry is listed and waits while ord_4 is sent (with more slots
        // the same happens to the entries beyond them).
        var configuration = EngineHarness.configuration()
        configuration.pushConcurrency = 1
        try await EngineHarness.with(configuration: configuration) { h in
            #expect(await h.engine.performFullSync().succeeded)
            try await h.engine.update(.orders, id: "ord_4", fields: ["notes": "pushed first"])
            try await h.engine.update(.orders, id: "ord_6", fields: ["notes": "older"])
            // While ord_4 is being sent, ord_6 is edited again: its entry (never sent) takes the new value. The run
            // had already read the entry; it must send what the entry holds when its turn comes.
            let engine = h.engine
            let edited = h.recorder.once(when: { if case .sending(_, .orders, "ord_4") = $0 { true } else { false } }) {
                _ = try? engine.changes.update(.orders, id: "ord_6", fields: ["notes": "newer"])
            }
            let report = await h.engine.sync([])
            #expect(edited.fired)
            #expect(report.succeeded, "\(report.stop ?? "")")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_6").notes == "newer")
            #expect(try h.local(Order.self, "ord_6")?.notes == "newer")
            #expect(try h.engine.pendingChangesCount() == 0)
        }
    }

    @Test("changes of different records are in flight together; one ticket's messages never overlap and stay in order")
    func concurrentPushKeepsPerRecordOrder() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            var written: [String: [String]] = [:]
            for round in 1...3 {
                for ticket in ["tkt_1", "tkt_2", "tkt_3", "tkt_4"] {
                    let message = try await h.engine.createTicketMessage(
                        ticketId: ticket, content: "\(ticket) #\(round)")
                    written[ticket, default: []].append(message.id)
                }
            }
            for id in ["ord_1", "ord_2", "ord_3", "ord_4"] {
                try await h.engine.update(.orders, id: id, fields: ["notes": "pushed together"])
            }
            // Every request takes 30 ms on the server, so requests that may overlap do.
            try await h.faultPlan(#"{"rate": 1, "kinds": {"slow": 1}, "slow_ms": 30}"#)
            #expect(await h.engine.sync([]).pushed == 16)

            let ticketOf = Dictionary(uniqueKeysWithValues: written.flatMap { ticket, ids in ids.map { ($0, ticket) } })
            var inFlight: Set<String> = []
            var mostInFlight = 0
            var sent: [String: [String]] = [:]
            for event in h.recorder.events {
                switch event {
                case .sending(_, _, let id):
                    if let ticket = ticketOf[id] {
                        #expect(
                            !inFlight.contains(where: { ticketOf[$0] == ticket }), "two messages of \(ticket) overlap")
                        sent[ticket, default: []].append(id)
                    }
                    inFlight.insert(id)
                    mostInFlight = max(mostInFlight, inFlight.count)
                case .accepted(_, _, let id): inFlight.remove(id)
                default: break
                }
            }
            #expect(sent == written, "each ticket's messages are sent in the order they were written")
            #expect(mostInFlight > 1, "changes of different records were in flight together")
            #expect(mostInFlight <= EngineHarness.configuration().pushConcurrency)
            // The feed lists records in the order the server wrote them.
            let feed = try await h.backend.get("/api/v1/ticket_messages/changes?limit=1000").text
            for (ticket, ids) in written {
                let positions = ids.compactMap { feed.range(of: $0)?.lowerBound }
                #expect(
                    positions.count == 3 && positions == positions.sorted(),
                    "the server wrote \(ticket)'s messages in order")
            }
        }
    }
}
