import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIDev
import RepairSyncModels
import Testing

/// Money stays exact from the server's storage to a decoded model.
@Suite("Exact decimals")
struct DecimalTests {
    @Test("amounts a Double would round arrive as the same decimal strings, whether written as strings or numbers")
    func exactEndToEnd() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 2)) { backend in
            let edit = try await backend.send(
                .PATCH, "/admin/records/orders/ord_1",
                json: #"{"total":"12345678901234567.89","deposit":0.1,"balance":"-0.30"}"#)
            #expect(edit.status == 200, "\(edit.text)")
            let response = try await backend.get("/api/v1/orders/ord_1")
            #expect(response.text.contains(#""total":"12345678901234567.89""#), "\(response.text)")
            #expect(response.text.contains(#""deposit":"0.1""#))
            let order = try JSONDecoder().decode(Order.self, from: response.body)
            #expect(order.total == Money(Decimal(string: "12345678901234567.89")!))
            #expect(order.deposit == Money(Decimal(string: "0.1")!))
            #expect(order.balance == Money(Decimal(string: "-0.3")!))

            let feed = try await backend.get("/api/v1/orders/changes")
            let page = try JSONDecoder().decode(ChangesPage<Order>.self, from: feed.body)
            #expect(page.data.first { $0.id == "ord_1" }?.total == order.total)
        }
    }
}
