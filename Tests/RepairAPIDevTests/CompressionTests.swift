import AsyncHTTPClient
import BackendTestSupport
import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1
import RepairAPIDev
import RepairSyncModels
import Testing

/// repair-api-dev compresses large answers for clients that accept gzip, and serves the compression faults.
@Suite("Compressed answers")
struct CompressionTests {
    /// A client that neither asks for nor inflates compressed answers (the shared one does both): the bytes as sent.
    static let raw = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init())

    static func fetch(
        _ backend: RunningBackend, _ path: String, token: String? = RunningBackend.token,
        headers: [(String, String)] = []
    ) async throws -> APIResponse {
        var request = HTTPClientRequest(url: backend.baseURL + path)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await raw.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return APIResponse(
            status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }

    static func inflate(_ body: Data) throws -> Data {
        var buffer = ByteBuffer(bytes: body)
        let inflated = try buffer.decompress(with: .gzip())
        return Data(inflated.readableBytesView)
    }

    @Test("a large answer is gzipped for a client that accepts gzip, and inflates to the same JSON")
    func compressesLargeAnswers() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 200)) { backend in
            let path = "/api/v1/orders/changes?limit=200"
            let plain = try await Self.fetch(backend, path)
            #expect(plain.headers.first(name: "Content-Encoding") == nil)
            let compressed = try await Self.fetch(backend, path, headers: [("Accept-Encoding", "gzip")])
            #expect(compressed.status == 200)
            #expect(compressed.headers.first(name: "Content-Encoding") == "gzip")
            #expect(compressed.headers.first(name: "Vary") == "Accept-Encoding")
            #expect(compressed.headers.first(name: "Content-Length") == String(compressed.body.count))
            #expect(compressed.body.count * 4 < plain.body.count, "\(compressed.body.count) vs \(plain.body.count)")
            #expect(try Self.inflate(compressed.body) == plain.body)

            let counters = try await backend.get("/admin/counters").object()
            #expect(counters["compressed_responses"] as? Int == 1)
            let sent = try #require(counters["response_body_bytes"] as? Int)
            let unencoded = try #require(counters["response_body_bytes_unencoded"] as? Int)
            #expect(unencoded - sent == plain.body.count - compressed.body.count)
        }
    }

    @Test("no compression without gzip in Accept-Encoding, with q=0, for small answers, or when turned off")
    func leavesOthersAlone() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 50)) { backend in
            let path = "/api/v1/orders/changes"
            for header in ["identity", "gzip;q=0", "br", "deflate"] {
                let response = try await Self.fetch(backend, path, headers: [("Accept-Encoding", header)])
                #expect(response.headers.first(name: "Content-Encoding") == nil, "\(header)")
                #expect(try response.object()["data"] != nil)
            }
            for header in ["gzip;q=0.5", "deflate, gzip", "*", "GZIP"] {
                let response = try await Self.fetch(backend, path, headers: [("Accept-Encoding", header)])
                #expect(response.headers.first(name: "Content-Encoding") == "gzip", "\(header)")
            }
            // Health is a few dozen bytes: below the threshold.
            let health = try await Self.fetch(
                backend, "/api/v1/health", token: nil, headers: [("Accept-Encoding", "gzip")])
            #expect(health.headers.first(name: "Content-Encoding") == nil)
            #expect(try health.object()["status"] as? String == "ok")
        }
        try await RunningBackend.with(seed: SeedOptions(orders: 50), compression: false) { backend in
            let response = try await Self.fetch(
                backend, "/api/v1/orders/changes", headers: [("Accept-Encoding", "gzip")])
            #expect(response.headers.first(name: "Content-Encoding") == nil)
            #expect(try response.object()["data"] != nil)
        }
    }

    @Test("the gzip bomb fault: a small body that inflates far beyond any answer, then valid JSON")
    func bomb() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 5)) { backend in
            let queued = try await backend.send(
                .POST, "/admin/faults/next", json: #"{"kind":"gzip_bomb","path_prefix":"/api/v1/orders/changes"}"#)
            #expect(queued.status == 200)
            // Served whatever the client accepts, as a hostile server would.
            let response = try await Self.fetch(backend, "/api/v1/orders/changes")
            #expect(response.status == 200)
            #expect(response.headers.first(name: "Content-Encoding") == "gzip")
            #expect(response.body.count < 1 << 20)
            let inflated = try Self.inflate(response.body)
            #expect(inflated.count > 256 << 20)
            #expect(inflated.count / response.body.count > 500)
            // JSON whitespace, then an empty page: valid JSON to a client that would hold it whole.
            #expect(inflated.prefix(1 << 20).allSatisfy { $0 == UInt8(ascii: " ") })
            let page = try JSONSerialization.jsonObject(with: inflated.suffix(200).drop { $0 == UInt8(ascii: " ") })
            #expect((page as? [String: Any])?["has_more"] as? Bool == false)
            // One shot: the next answer is the real page.
            #expect(try await Self.fetch(backend, "/api/v1/orders/changes").object()["data"] != nil)
        }
    }

    @Test("the corrupt gzip fault: Content-Encoding gzip over a body no inflater accepts")
    func corrupt() async throws {
        try await RunningBackend.with(seed: SeedOptions(orders: 5)) { backend in
            _ = try await backend.send(
                .POST, "/admin/faults/next", json: #"{"kind":"corrupt_gzip","path_prefix":"/api/v1/orders/changes"}"#)
            let response = try await Self.fetch(
                backend, "/api/v1/orders/changes", headers: [("Accept-Encoding", "gzip")])
            #expect(response.status == 200)
            #expect(response.headers.first(name: "Content-Encoding") == "gzip")
            #expect(throws: (any Error).self) { try Self.inflate(response.body) }
        }
    }
}
