import Foundation
import RepairSyncModels
import Testing

@Suite struct StatusTests {
    @Test func knownValuesRoundTrip() {
        for status in OrderStatus.known { #expect(OrderStatus(rawValue: status.rawValue) == status) }
        for status in DeviceStatus.known { #expect(DeviceStatus(rawValue: status.rawValue) == status) }
        for status in TicketStatus.known { #expect(TicketStatus(rawValue: status.rawValue) == status) }
        #expect(
            OrderStatus.known.map(\.rawValue) == [
                "booked_in", "in_progress", "awaiting_parts", "ready", "collected", "cancelled",
            ])
        #expect(DeviceStatus.known.count == 11)
        #expect(TicketStatus.known.map(\.rawValue) == ["open", "pending", "closed"])
    }

    @Test func unknownValueIsKeptVerbatim() throws {
        let status = try JSONDecoder().decode(OrderStatus.self, from: Data(#""on_hold""#.utf8))
        #expect(status == .unrecognized("on_hold"))
        #expect(!status.isKnown)
        #expect(status.displayName == "On hold")
        #expect(status.isActive)
        #expect(String(decoding: try JSONEncoder().encode(status), as: UTF8.self) == #""on_hold""#)
    }

    @Test func displayNamesAndActivity() {
        #expect(OrderStatus.awaitingParts.displayName == "Awaiting parts")
        #expect(OrderStatus.known.filter(\.isActive) == [.bookedIn, .inProgress, .awaitingParts, .ready])
        #expect(DeviceStatus.qualityCheck.displayName == "Quality check")
        #expect(!DeviceStatus.collected.isActive)
        #expect(DeviceStatus.unrepairable.isActive)
        #expect(TicketStatus.known.filter(\.isActive) == [.open, .pending])
    }
}
