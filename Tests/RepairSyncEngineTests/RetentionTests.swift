import BackendTestSupport
import Foundation
import GRDB
import RepairSyncEngine
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

/// Retention removes exactly the eligible records, in batches, and nothing a pending change needs.
@Suite("Retention", .timeLimit(.minutes(2)))
struct RetentionTests {
    @Test("collected/cancelled orders and closed tickets older than N days go, with their children; pending ones stay")
    func eligibleOnly() async throws {
        try await EngineHarness.with(orders: 200) { h in
            #expect(await h.engine.performFullSync().succeeded)
            let days = 30
            let now = Timestamp.now()
            let cutoff = now.adding(milliseconds: -Int64(days) * 86_400_000)
            let orders = try await h.store.read { db in try Order.fetchAll(db) }
            let tickets = try await h.store.read { db in try Ticket.fetchAll(db) }
            let oldOrders = orders.filter { [.collected, .cancelled].contains($0.status) && $0.updatedAt < cutoff }
            let oldTickets = tickets.filter { $0.status == .closed && $0.updatedAt < cutoff }
            try #require(oldOrders.count >= 4 && oldTickets.count >= 2, "the seed must have old records")

            // Pending changes on eligible records: an order's notes, a device of another order, a message on a ticket.
            let keptOrder = oldOrders[0].id
            try await h.engine.update(.orders, id: keptOrder, fields: ["notes": "still being discussed"])
            let withDevice = try oldOrders.dropFirst().first { order in
                try h.integer("SELECT COUNT(*) FROM devices WHERE order_id = '\(order.id)'") > 0
            }
            let keptByDevice = try #require(withDevice).id
            let device = try h.strings("SELECT id FROM devices WHERE order_id = '\(keptByDevice)' LIMIT 1")[0]
            try await h.engine.update(.devices, id: device, fields: ["diagnosis": "pending"])
            let keptTicket = oldTickets[0].id
            try await h.engine.createTicketMessage(ticketId: keptTicket, content: "one more thing")

            let expectedOrders = Set(oldOrders.map(\.id)).subtracting([keptOrder, keptByDevice])
            let expectedTickets = Set(oldTickets.map(\.id)).subtracting([keptTicket])
            let report = try await Retention(store: h.store, days: days, batchSize: 7).run(now: now)

            #expect(report.orders == expectedOrders.count)
            #expect(report.tickets == expectedTickets.count)
            let remainingOrders = Set(
                try await h.store.read { db in try String.fetchAll(db, sql: "SELECT id FROM orders") })
            let remainingTickets = Set(
                try await h.store.read { db in try String.fetchAll(db, sql: "SELECT id FROM tickets") })
            #expect(remainingOrders == Set(orders.map(\.id)).subtracting(expectedOrders))
            #expect(remainingTickets == Set(tickets.map(\.id)).subtracting(expectedTickets))
            #expect(remainingOrders.isSuperset(of: [keptOrder, keptByDevice]))
            #expect(remainingTickets.contains(keptTicket))
            #expect(try h.integer("SELECT COUNT(*) FROM devices WHERE order_id NOT IN (SELECT id FROM orders)") == 0)
            #expect(
                try h.integer("SELECT COUNT(*) FROM ticket_messages WHERE ticket_id NOT IN (SELECT id FROM tickets)")
                    == 0)
            #expect(report.devices > 0 && report.messages > 0)
            #expect(try h.engine.pendingChangesCount() == 3, "no pending change lost")

            // The pending changes still go through.
            #expect(await h.engine.sync([]).pushed == 3)
            // Pushed, the device no longer holds its old order back; the order and the ticket that the server just
            // changed are recent now, so they stay.
            let again = try await Retention(store: h.store, days: days).run(now: now)
            #expect(again.orders == 1)
            #expect(try h.local(Order.self, keptByDevice) == nil)
            #expect(try h.local(Order.self, keptOrder) != nil)
        }
    }

    @Test("the conflict log's entries resolved more than N days ago go; open ones and recent ones stay")
    func resolvedConflictsGo() async throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        let now = Timestamp.now()
        let day: Int64 = 86_400_000
        // (record, state, detected and resolved so many days ago)
        let entries: [(String, String, Int64?)] = [
            ("ord_old", "resolved", 40), ("ord_older", "resolved", 400), ("ord_recent", "resolved", 5),
            ("ord_open", "open", nil),
        ]
        try await store.write { db in
            for (record, state, daysAgo) in entries {
                try db.execute(
                    sql: """
                        INSERT INTO conflicts (collection, record_id, fields, base, local, remote, remote_version, policy,
                                               outcome, state, detected_at, resolved_at)
                        VALUES ('orders', ?, '["notes"]', '{}', '{}', '{}', 2, 'server-wins', 'kept_remote', ?, ?, ?)
                        """,
                    arguments: [
                        record, state, now.millisecondsSince1970 - 500 * day,
                        daysAgo.map { now.millisecondsSince1970 - $0 * day },
                    ])
            }
        }
        let report = try await Retention(store: store, days: 30, batchSize: 1).run(now: now)
        #expect(report.conflicts == 2)
        #expect(report.total == 2)
        let left = try await store.read { db in
            try String.fetchAll(db, sql: "SELECT record_id FROM conflicts ORDER BY record_id")
        }
        #expect(left == ["ord_open", "ord_recent"])
    }
}
