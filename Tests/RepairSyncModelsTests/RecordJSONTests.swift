import Foundation
import RepairSyncModels
import RepairSyncTestSupport
import Testing

@Suite struct RecordJSONTests {
    /// Decodes `json` as `T`, encodes it again and checks that the two documents are the same.
    func roundTrip<T: Codable>(_ type: T.Type, _ json: String) throws -> T {
        let value = try JSONDecoder().decode(T.self, from: Data(json.utf8))
        let again = try JSONEncoder().encode(value)
        #expect(try Fixtures.jsonObject(again) == Fixtures.jsonObject(json))
        return value
    }

    @Test func order() throws {
        let order = try roundTrip(Order.self, Fixtures.order)
        #expect(order.total == Money(exactly: "1234567.89"))
        #expect(order.displayRef == "#1042")
        #expect(!order.isPaid)
        let unknown = try roundTrip(Order.self, Fixtures.orderWithUnknownStatus)
        #expect(unknown.status == .unrecognized("on_hold_for_insurance"))
    }

    @Test func device() throws {
        let device = try roundTrip(Device.self, Fixtures.device)
        #expect(device.displayName == "Apple iPhone 13")
        #expect(device.price == Money(exactly: "0.3"))
        let bare = try roundTrip(Device.self, Fixtures.deviceWithUnknownStatus)
        #expect(bare.displayName == "tablet")
        #expect(bare.status.rawValue == "sent_to_manufacturer")
    }

    @Test func client() throws {
        let client = try roundTrip(Client.self, Fixtures.client)
        #expect(client.fullName == "Ada Lovelace")
        #expect(client.displayName == "Ada Lovelace")
        #expect(client.initials == "AL")
        #expect(client.totalSpent.canonicalText == "99999999999999999.99")
    }

    @Test func ticketsAndMessages() throws {
        let ticket = try roundTrip(Ticket.self, Fixtures.ticket)
        #expect(ticket.subject == "Où est mon téléphone ?")
        #expect(try roundTrip(Ticket.self, Fixtures.ticketWithUnknownStatus).status == .unrecognized("escalated"))
        #expect(try roundTrip(TicketMessage.self, Fixtures.ticketMessage).senderType == .staff)
        #expect(
            try roundTrip(TicketMessage.self, Fixtures.ticketMessageFromUnknownSender).senderType
                == .unrecognized("system"))
    }

    @Test func dashboardStats() throws {
        let stats = try roundTrip(DashboardStats.self, Fixtures.dashboardStats)
        #expect(stats.revenue.current == Money(exactly: "5120.50"))
        #expect(stats.devices.comparisons.first?.changePercent == Decimal(string: "10.53"))
        #expect(stats.newClients.comparisons.first?.changePercent == nil)
    }

    @Test func moneyAsJSONNumberIsAccepted() throws {
        var json = Fixtures.order.replacingOccurrences(of: #""total":"1234567.89""#, with: #""total":1234567.89"#)
        json = json.replacingOccurrences(of: #""deposit":"0.1""#, with: #""deposit":0.1"#)
        let order = try JSONDecoder().decode(Order.self, from: Data(json.utf8))
        #expect(order.total == Money(exactly: "1234567.89"))
        #expect(order.deposit == Money(exactly: "0.1"))
    }

    @Test func isPaidFollowsTheBalance() throws {
        var order = try JSONDecoder().decode(Order.self, from: Data(Fixtures.order.utf8))
        order.balance = Money(exactly: "0")
        #expect(order.isPaid)
        order.balance = Money(exactly: "-5.00")
        #expect(order.isPaid)
        order.balance = Money(exactly: "0.01")
        #expect(!order.isPaid)
        order.balance = nil
        #expect(!order.isPaid)
    }

    @Test func clientNamesFallBack() throws {
        var client = try JSONDecoder().decode(Client.self, from: Data(Fixtures.client.utf8))
        client.firstName = nil
        client.lastName = "  Lovelace "
        #expect(client.fullName == "Lovelace")
        #expect(client.initials == "L")
        client.lastName = nil
        #expect(client.displayName == "Analytical Engines Ltd")
        #expect(client.initials == "A")
        client.company = nil
        #expect(client.displayName == "ada@example.com")
    }

    @Test func patchDistinguishesAbsentFromCleared() throws {
        let patch = DevicePatch(status: .repaired, diagnosis: .cleared)
        let json = String(decoding: try JSONEncoder().encode(patch), as: UTF8.self)
        #expect(try Fixtures.jsonObject(json) == Fixtures.jsonObject(#"{"status":"repaired","diagnosis":null}"#))
        let decoded = try JSONDecoder().decode(DevicePatch.self, from: Data(json.utf8))
        #expect(decoded == patch)
        #expect(decoded.resolution == nil)
    }
}
