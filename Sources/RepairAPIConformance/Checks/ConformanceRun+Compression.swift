internal import Foundation
internal import RepairSyncEngine
internal import RepairSyncProtocol

/// 2.1's rules for a server that compresses (compression itself is optional, and `compression` only reports it):
/// it compresses only for a client that named `gzip` (or `*`) without `q=0`, and says `Vary: Accept-Encoding` on what
/// it compressed.
extension ConformanceRun {
    static let compressionClauses = ["compression", "compression-unrequested", "compression-vary"]

    /// A page of orders, large enough to be worth compressing on any tenant with a few orders.
    static let compressionProbePath = "/api/v1/orders/changes?limit=100"

    /// The same page asked for as the daemon asks (`deflate, gzip`), then with an `Accept-Encoding` that does not take
    /// gzip (`identity`; `gzip;q=0, identity`): those two must come unencoded. (The first makes `compression` and
    /// `compression-vary` judgeable even when the run reads no feed.)
    func probeCompressionNegotiation() async {
        let id = CheckID(clause: "compression-unrequested")
        let (asked, _) = await client.call { api throws(APIError) in
            _ = try await api.request("GET", Self.compressionProbePath)
        }
        let askedEncoding = Self.contentEncoding(asked)
        for acceptEncoding in ["identity", "gzip;q=0, identity"] {
            let (exchange, _) = await client.call { api throws(APIError) in
                _ = try await api.request(
                    "GET", Self.compressionProbePath, headers: [("Accept-Encoding", acceptEncoding)])
            }
            guard exchange.status == 200 else {
                findings.problem(
                    id, "\(exchange.requestLine) with Accept-Encoding: \(acceptEncoding) \(exchange.answer), not 200")
                continue
            }
            if let encoding = Self.contentEncoding(exchange) {
                findings.problem(
                    id,
                    "\(exchange.requestLine) with Accept-Encoding: \(acceptEncoding) came with Content-Encoding: \(encoding): "
                        + "a server compresses only for a client that names gzip")
            } else {
                findings.examined(id)
            }
        }
        let size = asked.body.count
        findings.summary(
            id,
            "a page of \(size) bytes came unencoded for Accept-Encoding identity and gzip;q=0 "
                + (askedEncoding.map { "(\($0)-compressed for the daemon's deflate, gzip)" }
                    ?? "(the server did not compress it for the daemon's deflate, gzip either)"))
    }

    /// 2.1: every compressed answer of the run says `Vary: Accept-Encoding`. Not exercised when none came compressed.
    func judgeVary(_ exchanges: [Exchange]) {
        let id = CheckID(clause: "compression-vary")
        var compressed = 0
        for exchange in exchanges {
            guard let encoding = Self.contentEncoding(exchange) else { continue }
            compressed += 1
            let varies = exchange.headers.filter { $0.name.lowercased() == "vary" }
                .flatMap { $0.value.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if varies.contains("accept-encoding") {
                findings.examined(id)
            } else {
                findings.problem(
                    id,
                    "\(exchange.requestLine) came \(encoding)-compressed with "
                        + (varies.isEmpty ? "no Vary header" : "Vary: \(varies.joined(separator: ", "))")
                        + ", not Vary: Accept-Encoding")
            }
        }
        findings.summary(id, "all \(plural(compressed, "compressed answer")) carried Vary: Accept-Encoding")
        findings.notExercised(id, "no answer came compressed: the server does not compress (optional)")
    }

    /// The answer's content coding, lowercased; nil for none or `identity`.
    static func contentEncoding(_ exchange: Exchange) -> String? {
        guard let value = exchange.header("Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased(),
            !value.isEmpty, value != "identity"
        else { return nil }
        return value
    }
}
