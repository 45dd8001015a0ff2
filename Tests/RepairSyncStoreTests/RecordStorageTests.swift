import Foundation
import GRDB
import RepairSyncModels
import RepairSyncStore
import RepairSyncTestSupport
import Testing

@Suite struct RecordStorageTests {
    /// JSON → model → store → model → JSON, and the last JSON must equal the first.
    func roundTrip<R: ReplicaRecord>(_ type: R.Type, _ json: String, in store: ReplicaStore) throws -> R {
        let record = try JSONDecoder().decode(R.self, from: Data(json.utf8))
        try store.write { db in try record.upsert(db, syncedAt: .now()) }
        let id = record.id
        let loaded = try #require(try store.read { db in try R.fetchOne(db, key: id) })
        #expect(loaded == record)
        #expect(try Fixtures.jsonObject(JSONEncoder().encode(loaded)) == Fixtures.jsonObject(json))
        return loaded
    }

    @Test func everyModelRoundTripsThroughTheStore() throws {
        let dir = try TemporaryDirectory()
        let store = try ReplicaStore.open(at: dir.path("replica.sqlite"))
        _ = try roundTrip(Client.self, Fixtures.client, in: store)
        _ = try roundTrip(Order.self, Fixtures.order, in: store)
        let unknown = try roundTrip(Order.self, Fixtures.orderWithUnknownStatus, in: store)
        #expect(unknown.status == .unrecognized("on_hold_for_insurance"))
        _ = try roundTrip(Device.self, Fixtures.device, in: store)
        _ = try roundTrip(Device.self, Fixtures.deviceWithUnknownStatus, in: store)
        _ = try roundTrip(Ticket.self, Fixtures.ticket, in: store)
        _ = try roundTrip(Ticket.self, Fixtures.ticketWithUnknownStatus, in: store)
        _ = try roundTrip(TicketMessage.self, Fixtures.ticketMessage, in: store)
        _ = try roundTrip(TicketMessage.self, Fixtures.ticketMessageFromUnknownSender, in: store)
    }

    @Test func moneyIsStoredAsExactText() throws {
        let store = try ReplicaStore.inMemory()
        var order = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        order.total = try #require(Money(exactly: "0.1")) + (try #require(Money(exactly: "0.2")))
        try store.write { [order] db in try order.upsert(db, syncedAt: nil) }
        let (kind, text) = try store.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT typeof(total) AS k, total FROM orders"))
            return (row["k"] as String, row["total"] as String)
        }
        #expect(kind == "text")
        #expect(text == "0.3")
        #expect(try store.read { db in try Order.fetchOne(db, key: "ord_1")?.balance } == Money(exactly: "1234567.79"))
    }

    @Test func timestampsCompareCorrectlyInSQL() throws {
        let store = try ReplicaStore.inMemory()
        let base = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        let times = [
            "2026-11-22T13:05:09.9Z", "2026-11-22T13:05:09.12Z", "2026-11-22T14:00:00+02:00", "2025-01-01T00:00:00Z",
        ]
        try store.write { db in
            for (i, text) in times.enumerated() {
                var order = base
                order.id = "ord_t\(i)"
                order.updatedAt = Timestamp(rfc3339: text)!
                try order.upsert(db, syncedAt: nil)
            }
        }
        let sqlOrder = try store.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM orders ORDER BY updated_at")
        }
        let swiftOrder = times.enumerated()
            .sorted { Timestamp(rfc3339: $0.element)! < Timestamp(rfc3339: $1.element)! }
            .map { "ord_t\($0.offset)" }
        #expect(sqlOrder == swiftOrder)
    }

    @Test func deletingAParentDeletesItsChildren() throws {
        let store = try ReplicaStore.inMemory()
        let order = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        let device = try JSONDecoder().decode(Device.self, from: Data(Fixtures.device.utf8))
        let ticket = try JSONDecoder().decode(Ticket.self, from: Data(Fixtures.ticket.utf8))
        let message = try JSONDecoder().decode(TicketMessage.self, from: Data(Fixtures.ticketMessage.utf8))
        // Children first, as a changes page may deliver them: nothing refuses them.
        try store.write { db in
            try device.upsert(db, syncedAt: nil)
            try message.upsert(db, syncedAt: nil)
            try order.upsert(db, syncedAt: nil)
            try ticket.upsert(db, syncedAt: nil)
        }
        try store.write { db in
            _ = try Order.deleteOne(db, key: "ord_1")
            _ = try Ticket.deleteOne(db, key: "tkt_1")
        }
        let (devices, messages) = try store.read { db in
            (try Device.fetchCount(db), try TicketMessage.fetchCount(db))
        }
        #expect(devices == 0)
        #expect(messages == 0)
    }

    @Test func upsertReplacesTheServerCopy() throws {
        let store = try ReplicaStore.inMemory()
        var order = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        try store.write { [order] db in try order.upsert(db, syncedAt: nil) }
        order.status = .ready
        order.notes = nil
        order.version += 1
        let synced = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!
        try store.write { [order] db in try db.upsert([order], syncedAt: synced) }
        let (loaded, syncedAt) = try store.read { db in
            (
                try Order.fetchOne(db, key: "ord_1"),
                try String.fetchOne(db, sql: "SELECT synced_at FROM orders WHERE id = 'ord_1'")
            )
        }
        #expect(loaded == order)
        #expect(syncedAt == "2026-11-22T10:00:00.000Z")
        #expect(try store.read { db in try Order.fetchCount(db) } == 1)
    }

    @Test func aRowALocalToolBrokeIsAnErrorNotACrash() throws {
        let store = try ReplicaStore.inMemory()
        let order = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        try store.write { db in
            try order.upsert(db, syncedAt: nil)
            try db.execute(sql: "UPDATE orders SET total = 'twelve' WHERE id = 'ord_1'")
        }
        #expect(throws: (any Error).self) { try store.read { db in try Order.fetchOne(db, key: "ord_1") } }
    }
}
