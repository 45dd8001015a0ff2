internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import RepairSyncModels

/// `GET /api/v1/events` (docs/api.md section 4.8): the change-notification stream as Server-Sent Events, and its
/// admin switches under `/admin/events` (section 7.1).
struct EventRoutes {
    let hub: ChangeEventHub
    /// The `/admin/events` switches (with `--admin` only).
    let adminEnabled: Bool

    func register(on router: Router<DevRequestContext>) {
        router.group("api/v1").get("events") { request, context in
            hub.countRequest()
            let switches = hub.switches
            switch switches.mode {
            case .off:
                return BackendReply.error(404, "not_found", "no route for GET /api/v1/events").response()
            case .unavailable:
                return BackendReply.error(503, "unavailable", "the change stream is unavailable").response()
            case .on:
                break
            }
            guard let (subscription, opening) = hub.subscribe(lastEventID: request.headers[.lastEventID]) else {
                return BackendReply.error(503, "unavailable", "too many open change streams").response()
            }
            let hub = hub
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream; charset=utf-8"
            headers[.cacheControl] = "no-store"
            // A reverse proxy (nginx) must pass each event on as it is written.
            headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    defer { hub.unsubscribe(subscription) }
                    try await Self.serve(subscription, opening: opening, hub: hub, writer: &writer)
                })
        }
        guard adminEnabled else { return }
        let admin = router.group("admin")
        admin.get("events") { _, _ in try BackendReply.json(200, AdminBody(hub.snapshot)).response() }
        admin.put("events") { request, context in
            let body = try await APIRoutes.body(of: request, context)
            guard let update = try? JSONDecoder().decode(AdminUpdate.self, from: body) else {
                return BackendReply.error(
                    400, "invalid_request",
                    "expected {\"mode\"?: \"on\"|\"off\"|\"unavailable\", \"heartbeats\"?: bool, \"heartbeat_ms\"?: 10...3600000}"
                ).response()
            }
            var switches = hub.switches
            if let mode = update.mode { switches.mode = mode }
            if let heartbeats = update.heartbeats { switches.heartbeats = heartbeats }
            if let milliseconds = update.heartbeatMs {
                guard (10...3_600_000).contains(milliseconds) else {
                    return BackendReply.error(
                        422, "invalid_value", "heartbeat_ms must be within 10...3600000", field: "heartbeat_ms"
                    )
                    .response()
                }
                switches.heartbeatInterval = .milliseconds(milliseconds)
            }
            hub.switches = switches
            // A stream turned off or refused ends now, as a restarted server's would.
            if switches.mode != .on { _ = hub.dropAll() }
            hub.wakeAll()
            return try BackendReply.json(200, AdminBody(hub.snapshot)).response()
        }
        admin.post("events/drop") { _, _ in
            try BackendReply.json(200, ["dropped": hub.dropAll()]).response()
        }
    }

    /// Writes the opening, then changes as they commit and a heartbeat comment whenever nothing else was written for
    /// an interval, until the stream is dropped (the connection is cut) or the client goes away.
    static func serve(
        _ subscription: ChangeEventHub.Subscription, opening: ChangeEventHub.Opening, hub: ChangeEventHub,
        writer: inout any ResponseBodyWriter
    ) async throws {
        var text = ""
        switch opening {
        case .ready(let id, let replay):
            text += event("ready", id: id, data: "{\"heartbeat_ms\":\(hub.switches.heartbeatInterval.milliseconds)}")
            for change in replay { text += event("change", id: change.id, data: changeData(change)) }
        case .reset(let head):
            text += event("ready", id: nil, data: "{\"heartbeat_ms\":\(hub.switches.heartbeatInterval.milliseconds)}")
            text += event("reset", id: head, data: "{}")
        }
        try await writer.write(ByteBuffer(string: text))
        var lastWrite = ContinuousClock.now
        while !Task.isCancelled {
            let (items, closed) = subscription.drain()
            if closed { throw StreamDropped() }
            if !items.isEmpty {
                var chunk = ""
                for item in items {
                    switch item {
                    case .change(let change): chunk += event("change", id: change.id, data: changeData(change))
                    case .reset(let id): chunk += event("reset", id: id, data: "{}")
                    }
                }
                try await writer.write(ByteBuffer(string: chunk))
                lastWrite = .now
                continue
            }
            let switches = hub.switches
            let due = lastWrite.advanced(by: switches.heartbeatInterval)
            if due <= .now {
                if switches.heartbeats { try await writer.write(ByteBuffer(string: ": heartbeat\n\n")) }
                lastWrite = .now
                continue
            }
            await subscription.wait(timeout: ContinuousClock.now.duration(to: due))
        }
    }

    static func event(_ name: String, id: Int64?, data: String) -> String {
        "event: \(name)\n" + (id.map { "id: \($0)\n" } ?? "") + "data: \(data)\n\n"
    }

    static func changeData(_ change: ChangeEventHub.Change) -> String {
        "{\"collection\":\"\(change.collection.name)\"}"
    }

    /// Ends the response without its last chunk: the connection is cut, as by a proxy or a restart.
    struct StreamDropped: Error {}

    struct AdminUpdate: Decodable {
        var mode: ChangeEventHub.Switches.Mode?
        var heartbeats: Bool?
        var heartbeatMs: Int?

        enum CodingKeys: String, CodingKey {
            case mode, heartbeats
            case heartbeatMs = "heartbeat_ms"
        }
    }

    struct AdminBody: Encodable {
        var mode: String
        var heartbeats: Bool
        var heartbeatMs: Int64
        var openStreams: Int
        var head: Int64
        var floor: Int64
        var held: Int
        var requests: Int
        var opened: Int
        var resumes: Int
        var resets: Int
        var overflows: Int

        init(_ snapshot: ChangeEventHub.Snapshot) {
            mode = snapshot.switches.mode.rawValue
            heartbeats = snapshot.switches.heartbeats
            heartbeatMs = snapshot.switches.heartbeatInterval.milliseconds
            openStreams = snapshot.openStreams
            head = snapshot.head
            floor = snapshot.floor
            held = snapshot.held
            requests = snapshot.requests
            opened = snapshot.opened
            resumes = snapshot.resumes
            resets = snapshot.resets
            overflows = snapshot.overflows
        }

        enum CodingKeys: String, CodingKey {
            case mode, heartbeats, head, floor, held, requests, opened, resumes, resets, overflows
            case heartbeatMs = "heartbeat_ms"
            case openStreams = "open_streams"
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}

extension Duration {
    var milliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
