internal import AsyncHTTPClient
public import Foundation
internal import NIOCore
internal import NIOHTTP1

/// The development backend's API and admin surface, as the scenarios use them: counters (what the server applied,
/// replayed and refused), fault plans, edits as another user, and the full record set for convergence checks.
public struct AdminAPI: Sendable {
    public let baseURL: String
    public let token: String

    public struct Reply: Sendable {
        public let status: Int
        public let body: Data

        public func object() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
                throw ScenarioFailure("not a JSON object: \(String(decoding: body.prefix(300), as: UTF8.self))")
            }
            return object
        }
    }

    public func send(_ method: String, _ path: String, json: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 256 << 20)
        return Reply(status: Int(response.status.code), body: Data(body.readableBytesView))
    }

    /// `GET /admin/counters`.
    public func counters() async throws -> Counters {
        let reply = try await send("GET", "/admin/counters")
        guard reply.status == 200 else { throw ScenarioFailure("counters: HTTP \(reply.status)") }
        return try JSONDecoder().decode(Counters.self, from: reply.body)
    }

    /// Turns random faults on (`plan` as docs/api.md section 9 describes it) or off (nil).
    public func setFaults(_ plan: String?) async throws {
        let reply: Reply
        if let plan {
            reply = try await send("PUT", "/admin/faults", json: plan)
        } else {
            reply = try await send("DELETE", "/admin/faults")
        }
        guard reply.status == 200 else {
            throw ScenarioFailure("faults: HTTP \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
    }

    /// Edits a record as another user would (a new version on the server).
    public func edit(_ collection: String, _ id: String, _ fields: [String: String]) async throws {
        let json = String(
            decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
        let reply = try await send("PATCH", "/admin/records/\(collection)/\(id)", json: json)
        guard reply.status == 200 else { throw ScenarioFailure("admin edit \(collection)/\(id): HTTP \(reply.status)") }
    }

    /// Every live record of a collection through the changes feed: id → record object.
    public func allRecords(_ collection: String) async throws -> [String: [String: Any]] {
        var records: [String: [String: Any]] = [:]
        var cursor: String?
        while true {
            let query =
                "limit=1000"
                + (cursor.map { "&cursor=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" }
                    ?? "")
            let reply = try await send("GET", "/api/v1/\(collection)/changes?\(query)")
            guard reply.status == 200 else { throw ScenarioFailure("\(collection) feed: HTTP \(reply.status)") }
            let page = try reply.object()
            for record in page["data"] as? [[String: Any]] ?? [] {
                if let id = record["id"] as? String { records[id] = record }
            }
            for tombstone in page["deleted"] as? [[String: Any]] ?? [] {
                if let id = tombstone["id"] as? String { records[id] = nil }
            }
            cursor = page["next_cursor"] as? String ?? cursor
            guard page["has_more"] as? Bool == true else { return records }
        }
    }
}

/// `GET /admin/counters`: what the server did, counted by the server.
public struct Counters: Decodable, Sendable {
    public var messagesCreated: Int
    public var messageReplays: Int
    public var patchesApplied: Int
    /// Clients, orders and devices created by `POST`, per collection.
    public var recordsCreated: [String: Int]
    /// Creates answered with the record already made (the same id and body, without a remembered key).
    public var createReplays: Int
    public var idempotentReplays: Int
    public var versionConflicts: Int
    public var requests: Int
    public var faultsInjected: [String: Int]
    public var retryAfterViolations: Int
    public var pagesServed: [String: Int]
    public var pagesRepeated: [String: Int]

    enum CodingKeys: String, CodingKey {
        case requests
        case messagesCreated = "messages_created"
        case messageReplays = "message_replays"
        case patchesApplied = "patches_applied"
        case recordsCreated = "records_created"
        case createReplays = "create_replays"
        case idempotentReplays = "idempotent_replays"
        case versionConflicts = "version_conflicts"
        case faultsInjected = "faults_injected"
        case retryAfterViolations = "retry_after_violations"
        case pagesServed = "pages_served"
        case pagesRepeated = "pages_repeated"
    }
}
