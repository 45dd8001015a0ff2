import BackendTestSupport
import Foundation
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// Issue 22, item 2: what a waiting customer sees goes first, across records; a record's own changes keep their order.
@Suite("Push priority", .timeLimit(.minutes(4)))
struct PushPriorityTests {
    /// The seqs of the changes the engine started sending, in order.
    static func sendingOrder(_ recorder: EventRecorder) -> [Int64] {
        recorder.events.compactMap { if case .sending(let seq, _, _) = $0 { seq } else { nil } }
    }

    @Test(
        "1,000 pending note edits, then one order status change to ready: the status goes out in the first batch, and every note follows"
    )
    func statusBeforeNotes() async throws {
        try await EngineHarness.with(orders: 1001) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let engine = h.engine
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...1000 {
                    group.addTask { try await engine.update(.orders, id: "ord_\(n)", fields: ["notes": "note \(n)"]) }
                }
                try await group.waitForAll()
            }
            let status = try await engine.update(.orders, id: "ord_1001", fields: ["status": "ready"])
            #expect(status.priority == .critical)
            let entries = try engine.outboxEntries()
            #expect(entries.count == 1001)
            #expect(entries.filter { $0.seq != status.seq }.allSatisfy { $0.priority == .normal })

            let report = await engine.sync([])
            #expect(report.pushed == 1001, "\(report)")
            let order = Self.sendingOrder(h.recorder)
            let position = try #require(order.firstIndex(of: status.seq))
            let concurrency = EngineConfiguration().pushConcurrency
            #expect(position < concurrency, "the status was request \(position + 1) of \(order.count)")
            #expect(try await h.serverRecord(Order.self, "orders", "ord_1001").status == .ready)
            #expect(try await h.serverRecord(Order.self, "orders", "ord_1000").notes == "note 1000")
        }
    }

    @Test(
        "a public reply behind an internal message of the same ticket: the internal one goes first in the reply's class, and the reply right after it, ahead of 300 notes"
    )
    func urgencyIsInheritedWithinARecord() async throws {
        try await EngineHarness.with(orders: 300) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let engine = h.engine
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...300 {
                    group.addTask { try await engine.update(.orders, id: "ord_\(n)", fields: ["notes": "note \(n)"]) }
                }
                try await group.waitForAll()
            }
            let internalNote = try await engine.createTicketMessage(
                ticketId: "tkt_1", content: "parts ordered", isInternal: true)
            let reply = try await engine.createTicketMessage(ticketId: "tkt_1", content: "Your phone is ready")
            let entries = try engine.outboxEntries()
            let internalEntry = try #require(entries.first { $0.recordId == internalNote.id })
            let replyEntry = try #require(entries.first { $0.recordId == reply.id })
            #expect(internalEntry.priority == .normal && replyEntry.priority == .critical)

            #expect(await engine.sync([]).pushed == 302)
            let order = Self.sendingOrder(h.recorder)
            let first = try #require(order.firstIndex(of: internalEntry.seq))
            let second = try #require(order.firstIndex(of: replyEntry.seq))
            let concurrency = EngineConfiguration().pushConcurrency
            #expect(first < concurrency, "the message the reply waits for was request \(first + 1)")
            #expect(first < second, "a ticket's messages keep their order")
            #expect(second < 2 * concurrency, "the reply was request \(second + 1) of \(order.count)")
        }
    }

    @Test("the configured classes decide, and an engine opened with other classes classes the waiting changes again")
    func configuredClasses() async throws {
        try await EngineHarness.with { h in
            #expect(await h.engine.performFullSync().succeeded)
            let note = try await h.engine.update(.orders, id: "ord_1", fields: ["notes": "call before noon"])
            let status = try await h.engine.update(.orders, id: "ord_2", fields: ["status": "ready"])
            let diagnosis = try await h.engine.update(.devices, id: "dev_1", fields: ["diagnosis": "screen"])
            #expect([note.priority, status.priority, diagnosis.priority] == [.normal, .critical, .high])
            // A note and a status in one change: the most urgent field decides.
            let both = try await h.engine.update(.orders, id: "ord_1", fields: ["status": "in_progress"])
            #expect(both.seq == note.seq && both.priority == .critical)

            var configuration = EngineHarness.configuration()
            configuration.pushPriorities = PushPriorityRule.defaults.map { rule in
                var rule = rule
                if rule.collection == .orders { rule.priority = .normal }
                if rule.collection == .devices, rule.subject == "diagnosis" { rule.priority = .critical }
                return rule
            }
            let reopened = try h.reopenedEngine(configuration: configuration)
            let classes = Dictionary(uniqueKeysWithValues: try reopened.outboxEntries().map { ($0.seq, $0.priority) })
            #expect(classes == [note.seq: .normal, status.seq: .normal, diagnosis.seq: .critical])
        }
    }
}
