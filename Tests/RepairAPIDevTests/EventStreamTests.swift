import AsyncHTTPClient
import BackendTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import RepairSyncModels
import Testing

@testable import RepairAPIDev

/// `GET /api/v1/events` (docs/api.md section 4.8) as repair-api-dev serves it: the wire, authentication, resume
/// and its limits, and the bounds that keep a slow reader from growing the server's memory.
@Suite("Change stream")
struct EventStreamTests {
    /// The first `count` non-heartbeat blocks of the stream (each `event:`/`id:`/`data:` lines), read as they come.
    static func read(
        _ backend: RunningBackend, lastEventID: String? = nil, count: Int,
        after action: @Sendable () async throws -> Void = {}
    ) async throws -> (status: Int, contentType: String?, blocks: [String]) {
        var request = HTTPClientRequest(url: backend.baseURL + "/api/v1/events")
        request.headers.add(name: "Authorization", value: "Bearer \(RunningBackend.token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(20))
        guard response.status == .ok else {
            return (Int(response.status.code), response.headers.first(name: "Content-Type"), [])
        }
        var text = ""
        var blocks: [String] = []
        var acted = false
        for try await chunk in response.body {
            text += String(buffer: chunk)
            while let end = text.range(of: "\n\n") {
                let block = String(text[..<end.lowerBound])
                text = String(text[end.upperBound...])
                if !block.hasPrefix(":") { blocks.append(block) }
            }
            if !acted, !blocks.isEmpty {
                acted = true
                try await action()
            }
            if blocks.count >= count { break }
        }
        return (200, response.headers.first(name: "Content-Type"), blocks)
    }

    @Test("ready with the newest id and the heartbeat, then one change event per committed write, ids increasing")
    func wire() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 10)) { backend in
            let head = try await backend.get("/admin/counters").object()["max_seq"] as! Int
            let stream = try await Self.read(backend, count: 4) {
                _ = try await backend.send(.PATCH, "/admin/records/orders/ord_1", json: #"{"notes": "a"}"#)
                _ = try await backend.send(.DELETE, "/admin/records/tickets/tkt_1")
            }
            #expect(stream.contentType?.hasPrefix("text/event-stream") == true)
            #expect(stream.blocks[0] == "event: ready\nid: \(head)\ndata: {\"heartbeat_ms\":15000}")
            #expect(stream.blocks[1] == "event: change\nid: \(head + 1)\ndata: {\"collection\":\"orders\"}")
            // A deleted ticket: its messages' tombstones first (children before the parent), then its own.
            #expect(stream.blocks[2].hasPrefix("event: change\nid: \(head + 2)\ndata: {\"collection\":\""))
            #expect(stream.blocks[3].hasPrefix("event: change\nid: \(head + 3)\n"))
        }
    }

    @Test("no token: 401; the stream switched off: 404; unavailable: 503")
    func refusals() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 5)) { backend in
            #expect(try await backend.get("/api/v1/events", token: nil).status == 401)
            _ = try await backend.send(.PUT, "/admin/events", json: #"{"mode": "off"}"#)
            #expect(try await Self.read(backend, count: 1).status == 404)
            _ = try await backend.send(.PUT, "/admin/events", json: #"{"mode": "unavailable"}"#)
            #expect(try await Self.read(backend, count: 1).status == 503)
            let bad = try await backend.send(.PUT, "/admin/events", json: #"{"heartbeat_ms": 1}"#)
            #expect(bad.status == 422)
        }
    }

    @Test("Last-Event-ID: the changes after it are replayed; one the server cannot resume from gets a reset")
    func resume() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 10)) { backend in
            let head = try await backend.get("/admin/counters").object()["max_seq"] as! Int
            for index in 1...3 {
                _ = try await backend.send(.PATCH, "/admin/records/orders/ord_\(index)", json: #"{"notes": "r"}"#)
            }
            let resumed = try await Self.read(backend, lastEventID: "\(head + 1)", count: 3)
            #expect(resumed.blocks[0].hasPrefix("event: ready\nid: \(head + 1)\n"))
            #expect(resumed.blocks[1] == "event: change\nid: \(head + 2)\ndata: {\"collection\":\"orders\"}")
            #expect(resumed.blocks[2] == "event: change\nid: \(head + 3)\ndata: {\"collection\":\"orders\"}")
            // Before the seeded data (never announced), ahead of the server, or not an id of this server.
            for id in ["1", "\(head + 99)", "yesterday"] {
                let reset = try await Self.read(backend, lastEventID: id, count: 2)
                #expect(reset.blocks[0].hasPrefix("event: ready\ndata: "), "\(id): \(reset.blocks)")
                #expect(reset.blocks[1] == "event: reset\nid: \(head + 3)\ndata: {}", "\(id): \(reset.blocks)")
            }
        }
    }

    @Test("the ring is bounded (older ids reset) and a reader that falls behind gets one reset, not an unbounded queue")
    func bounds() {
        let hub = ChangeEventHub(ringCapacity: 10, queueCapacity: 5, maxStreams: 2)
        for id in 1...20 { hub.publish(.init(id: Int64(id), collection: .orders)) }
        #expect(hub.snapshot.held == 10)
        guard case .reset? = hub.subscribe(lastEventID: "9")?.1 else {
            Issue.record("an id older than the ring resumed")
            return
        }
        guard case .ready(let id, let replay)? = hub.subscribe(lastEventID: "15")?.1 else {
            Issue.record("an id within the ring did not resume")
            return
        }
        #expect(id == 15)
        #expect(replay.map(\.id) == [16, 17, 18, 19, 20])
        // Two streams open: a third is refused.
        #expect(hub.subscribe(lastEventID: nil) == nil)
        _ = hub.dropAll()
        let (slow, _) = hub.subscribe(lastEventID: nil)!
        for id in 21...1020 { hub.publish(.init(id: Int64(id), collection: .devices)) }
        let (items, closed) = slow.drain()
        #expect(items == [.reset(id: 1020)], "a slow reader's queue: \(items.count) items")
        #expect(!closed)
        #expect(hub.snapshot.overflows == 1)
        #expect(hub.snapshot.held == 10)
    }

    @Test(
        "a wait that news ended leaves nothing behind: the next wait sleeps (a stream used to spin after its first change)"
    )
    func quietAfterNews() async {
        let hub = ChangeEventHub(ringCapacity: 10, queueCapacity: 5, maxStreams: 2)
        let (subscription, _) = hub.subscribe(lastEventID: nil)!
        hub.publish(.init(id: 1, collection: .orders))
        await subscription.wait(timeout: .seconds(3600))
        #expect(subscription.drain().items == [.change(.init(id: 1, collection: .orders))])
        // The wait's timer was cancelled when the news ended it; it must not have signalled the next wait.
        #expect(!subscription.hasPendingSignal)
    }
}
