import Foundation
import RepairSyncModels
import RepairSyncTestSupport
import Testing

/// docs/api.md 2.4: a record carries every key of its shape, `null` when it has no value. The record types refuse a
/// key left out (`decodeNullable`): never read as a `null`.
@Suite("Records with every key")
struct RecordKeysTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    /// Why `json` does not decode as `T`, in one line; nil when it does.
    func refusal<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
        do {
            _ = try decode(T.self, json)
            return nil
        } catch let error as DecodingError {
            return error.summary
        } catch {
            return "\(error)"
        }
    }

    @Test("a record with every key decodes, explicit nulls and keys the shape does not name included")
    func everyKey() throws {
        #expect(try decode(Order.self, Fixtures.order).notes == "Cracked screen — customer waits")
        #expect(try decode(Order.self, Fixtures.orderWithUnknownStatus).notes == nil)
        let extra = Fixtures.order.replacingOccurrences(of: #""version":7"#, with: #""version":7,"colour":"red""#)
        #expect(try decode(Order.self, extra).version == 7)
        #expect(try decode(Device.self, Fixtures.deviceWithUnknownStatus).brand == nil)
        #expect(try decode(Client.self, Fixtures.client).id == "cli_1")
        #expect(try decode(Ticket.self, Fixtures.ticketWithUnknownStatus).id == "tkt_2")
        #expect(try decode(TicketMessage.self, Fixtures.ticketMessageFromUnknownSender).senderName == nil)
    }

    @Test("a key left out is refused, naming it, whether its value was a null or not, in every record type")
    func keyLeftOut() throws {
        // ord_2's notes are null, ord_1's are not: both are refused without the key.
        let withoutNull = Fixtures.orderWithUnknownStatus.replacingOccurrences(of: #""notes":null,"#, with: "")
        #expect(refusal(Order.self, withoutNull)?.hasPrefix("notes: left out") == true, "\(withoutNull)")
        let withoutValue = Fixtures.order.replacingOccurrences(of: #""deposit":"0.1","#, with: "")
        #expect(refusal(Order.self, withoutValue)?.hasPrefix("deposit: left out") == true)
        // Keys of the other shapes whose fixtures hold a null there: text, money, a number, a time.
        let cases: [(String, String, (String) -> String?)] = [
            (Fixtures.deviceWithUnknownStatus, "brand", { refusal(Device.self, $0) }),
            (Fixtures.deviceWithUnknownStatus, "price", { refusal(Device.self, $0) }),
            (Fixtures.client, "phone", { refusal(Client.self, $0) }),
            (Fixtures.ticketWithUnknownStatus, "message_count", { refusal(Ticket.self, $0) }),
            (Fixtures.ticketWithUnknownStatus, "last_message_at", { refusal(Ticket.self, $0) }),
            (Fixtures.ticketMessageFromUnknownSender, "sender_name", { refusal(TicketMessage.self, $0) }),
        ]
        for (fixture, key, refusal) in cases {
            let pattern = try Regex("\"\(key)\":[^,}]*,?")
            let without = fixture.replacing(pattern, with: "", maxReplacements: 1)
            #expect(without != fixture, "\(key) is in the fixture")
            #expect(refusal(without)?.hasPrefix("\(key): left out") == true, "\(key): \(refusal(without) ?? "taken")")
        }
    }

    @Test("a page with one record short of a key is refused whole, naming where; a 412's current too")
    func pagesAndConflicts() throws {
        let short = Fixtures.order.replacingOccurrences(of: #","device_count":2"#, with: "")
        let page =
            #"{"data":[\#(Fixtures.orderWithUnknownStatus),\#(short)],"deleted":[],"next_cursor":"c1","has_more":false}"#
        let refused = refusal(ChangesPage<Order>.self, page)
        #expect(refused?.hasPrefix("data[1].device_count: left out") == true, "\(refused ?? "taken")")
        let conflict = #"{"error":{"code":"version_mismatch","message":"stale"},"current":\#(short)}"#
        #expect(refusal(VersionConflictBody<Order>.self, conflict)?.hasPrefix("current.device_count: left out") == true)
        let whole = #"{"error":{"code":"version_mismatch","message":"stale"},"current":\#(Fixtures.order)}"#
        #expect(try decode(VersionConflictBody<Order>.self, whole).current.version == 7)
    }
}
