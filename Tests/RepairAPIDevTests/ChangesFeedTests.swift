import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairAPIDev
import RepairSyncModels
import Testing

/// The changes feed: complete under concurrent edits, tombstones, 410 on a cursor the server cannot honour.
@Suite("Changes feed")
struct ChangesFeedTests {
    func page(_ backend: RunningBackend, _ collection: String, cursor: String?, limit: Int) async throws
        -> ChangesPage<Order>
    {
        var path = "/api/v1/\(collection)/changes?limit=\(limit)"
        if let cursor { path += "&cursor=\(cursor)" }
        let response = try await backend.get(path)
        #expect(response.status == 200, "\(response.text)")
        return try JSONDecoder().decode(ChangesPage<Order>.self, from: response.body)
    }

    @Test("paging while records are edited loses none and repeats none at the same version")
    func pagingWhileEdited() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 200, seedValue: 7)) { backend in
            var replica: [String: Int] = [:]
            var seen = Set<String>()
            var cursor: String?
            var pages = 0
            var edits = 0
            repeat {
                let page = try await page(backend, "orders", cursor: cursor, limit: 37)
                for order in page.data {
                    #expect(seen.insert("\(order.id)@\(order.version)").inserted, "\(order.id) v\(order.version) twice")
                    replica[order.id] = order.version
                }
                for tombstone in page.deleted { replica[tombstone.id] = nil }
                cursor = page.nextCursor
                pages += 1
                // Between pages, another user edits records both behind and ahead of the cursor, and deletes one.
                for n in [pages * 7 % 200 + 1, (pages * 53 + 100) % 200 + 1] {
                    let edit = try await backend.send(
                        .PATCH, "/admin/records/orders/ord_\(n)", json: #"{"notes":"edit \#(pages)"}"#)
                    if edit.status == 200 { edits += 1 }
                }
                if pages == 3 { _ = try await backend.send(.DELETE, "/admin/records/orders/ord_150") }
                if !page.hasMore { break }
            } while pages < 100
            // The edits made after the last page are picked up by one more page.
            let tail = try await page(backend, "orders", cursor: cursor, limit: 1000)
            for order in tail.data { replica[order.id] = order.version }
            for tombstone in tail.deleted { replica[tombstone.id] = nil }
            #expect(!tail.hasMore)
            #expect(edits > 10)

            let counters = try await backend.get("/admin/counters").object()
            let serverCount = (counters["records"] as? [String: Int])?["orders"]
            #expect(replica.count == serverCount)
            #expect(replica["ord_150"] == nil)
            for n in 1...200 where n != 150 {
                let record = try await backend.get("/api/v1/orders/ord_\(n)")
                let version = try record.object()["version"] as? Int
                #expect(replica["ord_\(n)"] == version, "ord_\(n)")
            }
        }
    }

    @Test("a deleted record and its children leave tombstones and never reappear in data")
    func tombstones() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 20)) { backend in
            let orders = try await page(backend, "orders", cursor: nil, limit: 1000)
            let devicesResponse = try await backend.get("/api/v1/devices/changes?limit=1000")
            let devices = try JSONDecoder().decode(ChangesPage<Device>.self, from: devicesResponse.body)
            guard let order = orders.data.first(where: { o in devices.data.contains { $0.orderId == o.id } }) else {
                Issue.record("the seed has no order with a device")
                return
            }
            let childIds = Set(devices.data.filter { $0.orderId == order.id }.map(\.id))

            let delete = try await backend.send(.DELETE, "/admin/records/orders/\(order.id)")
            #expect(delete.status == 200, "\(delete.text)")

            let after = try await page(backend, "orders", cursor: orders.nextCursor, limit: 1000)
            #expect(after.deleted.map(\.id) == [order.id])
            #expect(after.data.isEmpty)
            let devicesAfter = try JSONDecoder().decode(
                ChangesPage<Device>.self,
                from: try await backend.get("/api/v1/devices/changes?limit=1000&cursor=\(devices.nextCursor)").body)
            #expect(Set(devicesAfter.deleted.map(\.id)) == childIds)

            let fromScratch = try await page(backend, "orders", cursor: nil, limit: 1000)
            #expect(!fromScratch.data.contains { $0.id == order.id })
            #expect(fromScratch.deleted.contains { $0.id == order.id })
            #expect(try await backend.get("/api/v1/orders/\(order.id)").status == 404)
        }
    }

    @Test("a record changed twice appears once, at its latest position and version")
    func changedTwiceAppearsOnce() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 10)) { backend in
            let first = try await page(backend, "orders", cursor: nil, limit: 1000)
            _ = try await backend.send(.PATCH, "/admin/records/orders/ord_2", json: #"{"notes":"one"}"#)
            _ = try await backend.send(.PATCH, "/admin/records/orders/ord_5", json: #"{"notes":"x"}"#)
            _ = try await backend.send(.PATCH, "/admin/records/orders/ord_2", json: #"{"notes":"two"}"#)
            let next = try await page(backend, "orders", cursor: first.nextCursor, limit: 1000)
            #expect(next.data.map(\.id) == ["ord_5", "ord_2"])
            #expect(next.data.last?.notes == "two")
            let before = first.data.first { $0.id == "ord_2" }?.version ?? 0
            #expect(next.data.last?.version == before + 2)
        }
    }

    @Test("an unknown, foreign or expired cursor is answered with 410 and the feed restarts from scratch")
    func goneCursor() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 10)) { backend in
            let garbage = try await backend.get("/api/v1/orders/changes?cursor=not-a-cursor")
            #expect(garbage.status == 410)
            #expect(try garbage.errorCode() == "cursor_expired")

            let orders = try await page(backend, "orders", cursor: nil, limit: 3)
            let foreign = try await backend.get("/api/v1/devices/changes?cursor=\(orders.nextCursor)")
            #expect(foreign.status == 410)

            #expect(try await backend.send(.POST, "/admin/cursors/expire").status == 200)
            let expired = try await backend.get("/api/v1/orders/changes?cursor=\(orders.nextCursor)")
            #expect(expired.status == 410)
            let restart = try await page(backend, "orders", cursor: nil, limit: 1000)
            #expect(restart.data.count == 10)
            let resumed = try await backend.get("/api/v1/orders/changes?cursor=\(restart.nextCursor)")
            #expect(resumed.status == 200)
        }
    }

    @Test("limit outside 1...1000 is a 400 naming the parameter")
    func badLimit() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 1)) { backend in
            for limit in ["0", "1001", "ten"] {
                let response = try await backend.get("/api/v1/orders/changes?limit=\(limit)")
                #expect(response.status == 400)
                #expect(try response.errorField() == "limit")
            }
        }
    }
}
