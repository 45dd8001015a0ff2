internal import CompressNIO
internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore

/// Compresses `/api/v1` answers of at least `threshold` bytes with gzip when the client accepts it
/// (`Accept-Encoding` naming `gzip` or `*` with a non-zero q-value), as docs/api.md allows a server to; counts the
/// body bytes sent and what they would have been unencoded. It also serves the compression faults: a gzip bomb
/// (`gzip_bomb`: a small body that inflates to 1 GiB of valid JSON whitespace before a real page) and a corrupt
/// gzip body (`corrupt_gzip`), whatever the client accepts, as a hostile or broken server would.
///
/// It sits after the fault middleware (whose context says which fault to serve) and before the routes.
struct CompressionMiddleware: RouterMiddleware {
    typealias Context = DevRequestContext
    /// Off: every answer goes unencoded (`--no-compression`).
    let enabled: Bool
    /// Smaller answers are not worth compressing (a few packets either way).
    let threshold: Int
    let counters: DevCounters

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        guard request.uri.path.hasPrefix("/api/v1/") else { return response }
        switch context.responseFault {
        case .gzipBomb?:
            return encoded(&response, GzipSamples.bomb, original: GzipSamples.bombInflatedSize)
        case .corruptGzip?:
            return encoded(&response, GzipSamples.corrupt, original: response.body.contentLength ?? 0)
        case .cut?, .truncated?:
            // Damaged on purpose already: sent as the fault shaped it.
            count(sent: response.body.contentLength ?? 0, original: response.body.contentLength ?? 0)
            return response
        default:
            break
        }
        guard let length = response.body.contentLength else { return response }
        guard enabled, length >= threshold, response.headers[.contentEncoding] == nil,
            Self.acceptsGzip(request.headers[values: .acceptEncoding])
        else {
            count(sent: length, original: length)
            return response
        }
        var plain = try await Self.collect(response.body)
        let compressed = try plain.compress(with: .gzip())
        return encoded(&response, compressed, original: length)
    }

    private func encoded(_ response: inout Response, _ body: ByteBuffer, original: Int) -> Response {
        response.headers[.contentEncoding] = "gzip"
        response.headers[.vary] = "Accept-Encoding"
        response.headers[.contentLength] = nil
        response.body = ResponseBody(byteBuffer: body)
        count(sent: body.readableBytes, original: original, compressed: true)
        return response
    }

    private func count(sent: Int, original: Int, compressed: Bool = false) {
        counters.update {
            $0.responseBodyBytes += sent
            $0.responseBodyBytesUnencoded += original
            if compressed { $0.compressedResponses += 1 }
        }
    }

    /// Whether an `Accept-Encoding` list takes gzip: `gzip` or `*`, without `q=0`.
    static func acceptsGzip(_ values: [String]) -> Bool {
        for item in values.flatMap({ $0.split(separator: ",") }) {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0 { return true }
        }
        return false
    }

    /// The whole body of a response whose length is known (the backend's answers are built in memory).
    static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        let collector = Collector()
        try await body.write(CollectingWriter(collector: collector))
        return collector.buffer
    }

    private final class Collector: @unchecked Sendable {
        // Written by the one body writer, read after it finished.
        var buffer = ByteBuffer()
    }

    private struct CollectingWriter: ResponseBodyWriter {
        let collector: Collector

        mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            collector.buffer.writeBuffer(&buffer)
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

/// The bodies of the compression faults, made once.
enum GzipSamples {
    /// How large the bomb inflates: four times any sane limit for one answer (the daemon's is 64 MiB).
    static let bombInflatedSize = 256 << 20

    /// 256 MiB of spaces and then an empty changes page — valid JSON, which a client with no inflation limit would
    /// try to hold whole — in about 250 KiB of gzip.
    static let bomb: ByteBuffer = {
        // A fresh compressor, and room for each chunk's worst case: neither can fail.
        let compressor = try! ZlibCompressor(
            algorithm: .gzip, configuration: ZlibConfiguration(compressionLevel: .bestCompression, strategy: .rle))
        var output = ByteBuffer()
        let chunk = ByteBuffer(repeating: UInt8(ascii: " "), count: 1 << 20)
        let chunks = bombInflatedSize >> 20
        for _ in 0..<chunks {
            var input = chunk
            output.reserveCapacity(minimumWritableBytes: compressor.maxSize(from: input))
            try! compressor.deflate(from: &input, to: &output, flush: .no)
        }
        var tail = ByteBuffer(string: #"{"data":[],"deleted":[],"next_cursor":"bomb","has_more":false}"#)
        output.reserveCapacity(minimumWritableBytes: compressor.maxSize(from: tail) + (1 << 20))
        try! compressor.deflate(from: &tail, to: &output, flush: .finish)
        return output
    }()

    /// A gzip header followed by a deflate block of the reserved type: every inflater stops at its third byte.
    static let corrupt = ByteBuffer(
        bytes: [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03] + Array(repeating: 0xFF, count: 64))
}
