import Foundation
import RepairSyncModels
import RepairSyncTestSupport
import Testing

/// docs/api.md 2.4: a record carries every key of its shape, `null` when it has no value. What the engine reads from
/// the server goes through `CompleteRecord`, so a key left out is refused, never read as a `null`.
@Suite("Records with every key")
struct CompleteRecordTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test("a record with every key decodes, explicit nulls and keys the shape does not name included")
    func everyKey() throws {
        #expect(
            try decode(CompleteRecord<Order>.self, Fixtures.order).record.notes == "Cracked screen — customer waits")
        #expect(try decode(CompleteRecord<Order>.self, Fixtures.orderWithUnknownStatus).record.notes == nil)
        let extra = Fixtures.order.replacingOccurrences(of: #""version":7"#, with: #""version":7,"colour":"red""#)
        #expect(try decode(CompleteRecord<Order>.self, extra).record.version == 7)
        #expect(try decode(CompleteRecord<Device>.self, Fixtures.device).record.id == "dev_1")
        #expect(try decode(CompleteRecord<Client>.self, Fixtures.client).record.id == "cli_1")
        #expect(try decode(CompleteRecord<Ticket>.self, Fixtures.ticket).record.id == "tkt_1")
        #expect(try decode(CompleteRecord<TicketMessage>.self, Fixtures.ticketMessage).record.senderType == .staff)
    }

    @Test("a key left out is refused, naming the record and every key missing; the plain type reads it as null")
    func keyLeftOut() throws {
        let withoutNotes = Fixtures.order.replacingOccurrences(
            of: #""notes":"Cracked screen — customer waits","#, with: ""
        )
        .replacingOccurrences(of: #""deposit":"0.1","#, with: "")
        // The lenient reading this guards against: the notes and the deposit silently become nulls.
        #expect(try decode(Order.self, withoutNotes).notes == nil)
        do {
            _ = try decode(CompleteRecord<Order>.self, withoutNotes)
            Issue.record("an order without notes and deposit was taken")
        } catch let error as DecodingError {
            #expect(error.summary.contains("orders record ord_1 leaves out deposit, notes"), "\(error.summary)")
        }
    }

    @Test("a page with one record short of a key is refused whole; a 412's current too")
    func pagesAndConflicts() throws {
        let short = Fixtures.order.replacingOccurrences(of: #","device_count":2"#, with: "")
        let page =
            #"{"data":[\#(Fixtures.orderWithUnknownStatus),\#(short)],"deleted":[],"next_cursor":"c1","has_more":false}"#
        do {
            _ = try decode(ChangesPage<Order>.self, page)
            Issue.record("a page with a record short of device_count was taken")
        } catch let error as DecodingError {
            #expect(error.summary.hasPrefix("data[1]: orders record ord_1 leaves out device_count"), "\(error.summary)")
        }
        let conflict = #"{"error":{"code":"version_mismatch","message":"stale"},"current":\#(short)}"#
        #expect(throws: DecodingError.self) { try decode(VersionConflictBody<Order>.self, conflict) }
        let whole = #"{"error":{"code":"version_mismatch","message":"stale"},"current":\#(Fixtures.order)}"#
        #expect(try decode(VersionConflictBody<Order>.self, whole).current.version == 7)
    }
}
