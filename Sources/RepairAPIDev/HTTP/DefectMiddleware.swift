internal import CompressNIO
internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import RepairSyncModels
internal import Synchronization

/// Makes the switched-on defects (`Defect`) happen to `/api/v1` requests, around the real handlers: it edits the
/// request on the way in (drops `If-Match` or `Idempotency-Key`, points a cursor one page back) and the body on the
/// way out (money through a double, null keys left out, a `next_cursor` that skips an entry, a create's 200 made a
/// 201, heartbeats dropped from the change stream, a body gzipped without `Vary` or for a client that did not ask).
/// Compressing here, below `CompressionMiddleware`, leaves that middleware nothing to do: it passes an encoded answer
/// through. With no defect on it passes everything through untouched. (`drop_date_header` is done below the router,
/// by `DateHeaderDefectHandler`: the framework adds `Date` after every middleware.)
struct DefectMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext
    let defects: DefectSwitches
    let store: BackendStore

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let active = defects.active
        guard !active.isEmpty, request.uri.path.hasPrefix("/api/v1/") else { return try await next(request, context) }
        let response = try await rewrite(request, context: context, active: active, next: next)
        guard request.uri.path != "/api/v1/events" else { return response }
        if active.contains(.compressAlways) { return try await Self.gzip(response, vary: true) }
        if active.contains(.noVary), CompressionMiddleware.acceptsGzip(request.headers[values: .acceptEncoding]) {
            return try await Self.gzip(response, vary: false)
        }
        return response
    }

    private func rewrite(
        _ request: Request, context: Context, active: Set<Defect>, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // The event stream never ends: a defect never collects its body, it can only drop what passes through.
        if request.uri.path == "/api/v1/events" {
            var response = try await next(request, context)
            if active.contains(.noHeartbeat) {
                // The first heartbeat passes, then none: a stream that is quiet for good after its first bytes.
                let passed = Mutex(false)
                response.body = response.body.map { buffer in
                    guard buffer.readableBytesView.elementsEqual(Self.heartbeat.utf8) else { return buffer }
                    let first = passed.withLock { passed in
                        defer { passed = true }
                        return !passed
                    }
                    return first ? buffer : ByteBuffer()
                }
            }
            return response
        }
        var head = request.head
        if active.contains(.ignoreIfMatch) { head.headerFields[.ifMatch] = nil }
        if active.contains(.forgetIdempotencyKeys) { head.headerFields[.idempotencyKey] = nil }

        let feed = Self.feedCollection(request.uri.path)
        var cursor: String? = request.uri.queryParameters.get("cursor").map { String($0) }
        var repeating = false
        if active.contains(.repeatPage), let feed, let sent = cursor,
            case .some(let previous) = defects.repeatInstead(of: sent)
        {
            var path = "/api/v1/\(feed.name)/changes"
            var query: [String] = []
            if let limit = request.uri.queryParameters.get("limit") {
                query.append("limit=\(Self.escape(String(limit)))")
            }
            if let previous { query.append("cursor=\(Self.escape(previous))") }
            if !query.isEmpty { path += "?" + query.joined(separator: "&") }
            head.path = path
            cursor = previous
            repeating = true
        }
        if active.contains(.ignoreLimit), let feed,
            let limit = request.uri.queryParameters.get("limit").flatMap({ Int(String($0)) }),
            (1..<1000).contains(limit)
        {
            // (An invalid limit is still refused: only the clause on pages' sizes is broken.)
            var path = "/api/v1/\(feed.name)/changes?limit=1000"
            if let cursor { path += "&cursor=\(Self.escape(cursor))" }
            head.path = path
        }
        var response = try await next(Request(head: head, body: request.body), context)
        if active.contains(.createTwice), request.method == .post, Self.createCollection(request.uri.path) != nil,
            response.status == .ok
        {
            // 200 is the answer to a create of a record that already exists with that body.
            response.status = .created
            return response
        }

        let rewritesBody =
            active.contains(.floatMoney) || active.contains(.omitNullKeys)
            || (feed != nil && (active.contains(.repeatPage) || active.contains(.skipRecords)))
        guard rewritesBody, [200, 201, 412].contains(response.status.code) else { return response }
        var text = String(buffer: try await Self.collect(response.body))
        if let feed, response.status.code == 200 {
            if let next = Self.nextCursor(in: text) {
                if active.contains(.repeatPage) { defects.issued(next, after: cursor) }
                // A repeated page always says there is more, so a client comes back with the same cursor.
                if repeating { text = text.replacingOccurrences(of: #""has_more":false"#, with: #""has_more":true"#) }
                if active.contains(.skipRecords), text.contains(#""has_more":true"#), !repeating,
                    let skipping = try await skippingCursor(after: next, in: feed)
                {
                    text = text.replacingOccurrences(
                        of: #""next_cursor":"\#(next)""#, with: #""next_cursor":"\#(skipping)""#)
                }
            }
        }
        if active.contains(.floatMoney) { text = Self.moneyThroughDouble(text) }
        if active.contains(.omitNullKeys) { text = Self.withoutNullKeys(text) }
        var headers = response.headers
        headers[.contentLength] = nil
        return Response(
            status: response.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The smallest answer the compression defects gzip (as `repair-api-dev` compresses by default).
    static let compressionThreshold = 1024

    /// The answer gzipped, with `Vary: Accept-Encoding` or without; one under the threshold (or already encoded) as
    /// it is.
    private static func gzip(_ response: Response, vary: Bool) async throws -> Response {
        guard let length = response.body.contentLength, length >= compressionThreshold,
            response.headers[.contentEncoding] == nil
        else { return response }
        var plain = try await collect(response.body)
        let compressed = try plain.compress(with: .gzip())
        var headers = response.headers
        headers[.contentEncoding] = "gzip"
        headers[.vary] = vary ? "Accept-Encoding" : nil
        headers[.contentLength] = nil
        return Response(status: response.status, headers: headers, body: ResponseBody(byteBuffer: compressed))
    }

    /// `orders` for `/api/v1/orders/changes`.
    static func feedCollection(_ path: String) -> SyncCollection? {
        let parts = path.split(separator: "/")
        guard parts.count == 4, parts[3] == "changes" else { return nil }
        return SyncCollection(rawValue: String(parts[2]))
    }

    /// `orders` for `POST /api/v1/orders`: the collections created by POST (docs/api.md section 4.7).
    static func createCollection(_ path: String) -> SyncCollection? {
        let parts = path.split(separator: "/")
        guard parts.count == 3, let collection = SyncCollection(rawValue: String(parts[2])),
            [.clients, .orders, .devices].contains(collection)
        else { return nil }
        return collection
    }

    /// The heartbeat comment the change stream writes, alone in its chunk (`EventRoutes.serve`).
    static let heartbeat = ": heartbeat\n\n"

    static func nextCursor(in text: String) -> String? {
        guard let match = text.firstMatch(of: /"next_cursor":"([^"]*)"/) else { return nil }
        return String(match.1)
    }

    /// A cursor just past the entry that follows `next`: the entry is never delivered.
    private func skippingCursor(after next: String, in collection: SyncCollection) async throws -> String? {
        guard let cursor = FeedCursor(encoded: next),
            let skipped = try await store.sequence(after: cursor.sequence, in: collection)
        else { return nil }
        return FeedCursor(collection: collection, epoch: cursor.epoch, sequence: skipped).encoded
    }

    /// Every money string (`"total":"149.99"`) becomes the nearest double printed to 17 significant digits, as a JSON
    /// number (`"total":149.99000000000001`), the way a server that keeps money in floating point answers.
    static func moneyThroughDouble(_ text: String) -> String {
        text.replacing(/"(total|deposit|balance|price|total_spent|current|change)":"(-?[0-9]+(?:\.[0-9]+)?)"/) {
            match in
            let value = Double(String(match.2)) ?? 0
            return "\"\(match.1)\":\(String(format: "%.17g", value))"
        }
    }

    /// Every `"key":null` member left out (`{"a":null,"b":1}` → `{"b":1}`), the way a server that drops empty
    /// fields answers. Strings cannot hold an unescaped `"key":null` (their quotes are escaped), so only members go.
    static func withoutNullKeys(_ text: String) -> String {
        text.replacing(/,"[a-z_]+":null(?=[,}])/, with: "").replacing(/\{"[a-z_]+":null,?/, with: "{")
    }

    private static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    private static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        let sink = BodySink()
        try await body.write(CollectingWriter(sink: sink))
        return sink.buffer.withLock { $0 }
    }
}

/// Where `CollectingWriter` puts the bytes (the writer itself is consumed by `ResponseBody.write`).
private final class BodySink: Sendable {
    let buffer = Mutex(ByteBuffer())
}

private struct CollectingWriter: ResponseBodyWriter {
    let sink: BodySink

    mutating func write(_ buffer: ByteBuffer) async throws {
        sink.buffer.withLock { _ = $0.writeImmutableBuffer(buffer) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
