internal import Foundation
public import RepairSyncProtocol

/// One write request as the development backend received and answered it (`GET /admin/writes`, docs/api.md
/// section 7.1): what a test reads to tell a new request (a new `Idempotency-Key`) from a replay, the base it was
/// sent against (`If-Match`), and what went out under each key.
public struct ServerWrite: Decodable, Sendable, CustomStringConvertible {
    public var method: String
    public var path: String
    public var idempotencyKey: String?
    public var ifMatch: String?
    public var body: JSONValue?
    public var status: Int
    public var replayed: Bool

    enum CodingKeys: String, CodingKey {
        case method, path, body, status, replayed
        case idempotencyKey = "idempotency_key"
        case ifMatch = "if_match"
    }

    /// `If-Match` as a version: `"7"`, `7` or `W/"7"` → 7.
    public var ifMatchVersion: Int? {
        guard var text = ifMatch else { return nil }
        if text.hasPrefix("W/") { text.removeFirst(2) }
        return Int(text.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")))
    }

    public var description: String {
        "\(method) \(path) key \(idempotencyKey ?? "-") If-Match \(ifMatch ?? "-") → \(status)\(replayed ? " (replayed)" : "") \(body.map { "\($0)" } ?? "")"
    }
}

extension AdminAPI {
    /// The write requests the server received for `path` (e.g. `/api/v1/orders/ord_4`), oldest first.
    public func writes(_ path: String) async throws -> [ServerWrite] {
        let query = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
        let reply = try await send("GET", "/admin/writes?path=\(query)")
        guard reply.status == 200 else { throw ScenarioFailure("writes: HTTP \(reply.status)") }
        struct Body: Decodable { var writes: [ServerWrite] }
        return try JSONDecoder().decode(Body.self, from: reply.body).writes
    }
}
