internal import Foundation
internal import RepairSyncModels

/// The outcome of an API operation, independent of the HTTP framework: a status, a JSON body, and the headers
/// the contract asks for.
struct BackendReply: Sendable {
    var status: Int
    var body: Data
    /// The record version to send as `ETag`.
    var etag: Int? = nil
    /// True when this is a stored response replayed for a repeated Idempotency-Key.
    var replayed = false
    /// Seconds for `Retry-After`.
    var retryAfter: Int? = nil

    static func json(_ status: Int, _ value: some Encodable, etag: Int? = nil) throws -> BackendReply {
        BackendReply(status: status, body: try BackendJSON.encoder().encode(value), etag: etag)
    }

    static func error(_ status: Int, _ code: String, _ message: String, field: String? = nil) -> BackendReply {
        let body = APIErrorBody(code: code, message: message, field: field)
        // Encoding three strings cannot fail.
        return BackendReply(status: status, body: (try? BackendJSON.encoder().encode(body)) ?? Data())
    }

    /// Outcomes that a repeated Idempotency-Key must reproduce. Transient ones (5xx, 429) and authentication
    /// failures are not remembered: the retry is processed afresh.
    var isFinal: Bool {
        (200..<300).contains(status) || [404, 409, 412, 422].contains(status)
    }
}
