import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The baseline HTTP client: AsyncHTTPClient's shared client (keep-alive), one request at a time, no decoding
/// beyond what is needed to follow a feed.
struct PlainClient: Sendable {
    let baseURL: String
    let token: String

    struct Response {
        var status: Int
        var body: ByteBuffer
    }

    func send(_ method: HTTPMethod, _ path: String, json: String? = nil, headers: [(String, String)] = []) async throws
        -> Response
    {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 256 << 20)
        return Response(status: Int(response.status.code), body: body)
    }

    /// Fetches a collection's changes feed from `cursor` to its end, page by page, discarding the pages. Returns the
    /// pages fetched and the final cursor.
    func drainFeed(_ collection: String, from cursor: String? = nil, pageSize: Int) async throws
        -> (pages: Int, bytes: Int, cursor: String?)
    {
        var cursor = cursor
        var pages = 0
        var bytes = 0
        while true {
            var path = "/api/v1/\(collection)/changes?limit=\(pageSize)"
            if let cursor {
                path += "&cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)
            }
            let response = try await send(.GET, path)
            guard response.status == 200 else { throw BenchError("GET \(path): \(response.status)") }
            pages += 1
            bytes += response.body.readableBytes
            let tail = Self.tail(response.body)
            cursor = tail.cursor
            if !tail.hasMore { return (pages, bytes, cursor) }
        }
    }

    /// `next_cursor` and `has_more`, found from the end of a page without decoding it (they close the object).
    static func tail(_ body: ByteBuffer) -> (cursor: String?, hasMore: Bool) {
        let view = body.readableBytesView
        let suffix = String(decoding: view.suffix(400), as: UTF8.self)
        let hasMore = suffix.contains(#""has_more":true"#) || suffix.contains(#""has_more": true"#)
        guard let key = suffix.range(of: #""next_cursor":"#, options: .backwards) else { return (nil, hasMore) }
        let rest = suffix[key.upperBound...].drop { $0 == " " || $0 == "\"" }
        return (String(rest.prefix { $0 != "\"" }), hasMore)
    }
}
