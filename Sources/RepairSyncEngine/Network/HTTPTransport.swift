public import AsyncHTTPClient
internal import Foundation
public import Logging
internal import NIOCore
internal import NIOHTTP1
internal import NIOHTTPCompression
internal import NIOPosix
internal import NIOSSL
internal import Synchronization

/// `APITransport` over AsyncHTTPClient: requests go to `baseURL` + the request's path; bodies are read whole, up to
/// `maxResponseBytes`. TLS and the proxy are the HTTP client's (`TransportSettings.makeHTTPClient()`).
///
/// With a client built by `TransportSettings.makeHTTPClient()`, every request accepts a compressed answer (its
/// decompressor sends `Accept-Encoding: deflate, gzip` — and only then: a client that cannot inflate never asks). It
/// is inflated as it arrives; one that would inflate more than `TransportSettings.maxInflationRatio` times its
/// compressed size (a compression bomb), or that is corrupt, is refused before its body is used, as an interrupted
/// request whose text says so. `maxResponseBytes` bounds the inflated size.
/// Each answer is timed (`TransportTiming`) for the link meter.
///
/// A TLS failure is never retried on another scheme and never silent: a refused certificate becomes
/// `TransportFailure.tls` with the reason in words (`CertificateDiagnosis`: expired, unknown CA, wrong name), logged
/// at error level.
public struct HTTPTransport: APITransport {
    public let baseURL: String
    public let maxResponseBytes: Int
    /// The TLS and proxy settings the client was built with (to explain a refused certificate through the same path).
    public let settings: TransportSettings
    private let http: HTTPClient
    private let logger: Logger?

    /// A process-wide client with the default settings (the system's CAs, TLS 1.2 or newer, no proxy), for tools and
    /// tests. The daemon builds its own from its configuration (`TransportSettings.makeHTTPClient()`).
    public static let defaultHTTPClient: HTTPClient = {
        // The defaults have no CA file to read: this cannot fail.
        try! TransportSettings().makeHTTPClient()
    }()

    public init(
        baseURL: String, maxResponseBytes: Int = 64 << 20, http: HTTPClient = HTTPTransport.defaultHTTPClient,
        settings: TransportSettings = TransportSettings(), logger: Logger? = nil
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.maxResponseBytes = maxResponseBytes
        self.http = http
        self.settings = settings
        self.logger = logger
    }

    public func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse
    {
        do throws(ExchangeFailure) {
            return try await exchange(request, timeout: timeout)
        } catch {
            // A compressed answer past the inflation limit is a bomb — or an honest answer that compresses very well
            // (a page of records sharing a long pasted text: 262 times was seen), which asking again the same way
            // would meet every time, its collection stuck behind it. A GET (safe to repeat) is asked for once more
            // uncompressed; that answer is bounded by the body limit like any other.
            guard case .inflatesTooFar = error, request.method == "GET",
                !request.headers.contains(where: { $0.name.lowercased() == "accept-encoding" })
            else { throw error.failure }
            logger?.notice(
                "an answer inflated past the limit; asked again uncompressed", metadata: ["path": "\(request.path)"])
            var plain = request
            plain.headers.append(("Accept-Encoding", "identity"))
            do throws(ExchangeFailure) {
                return try await exchange(plain, timeout: timeout)
            } catch {
                throw error.failure
            }
        }
    }

    /// A failure of one exchange: the answer's compressed body inflating past the limit is told apart.
    private enum ExchangeFailure: Error {
        case inflatesTooFar(TransportFailure)
        case other(TransportFailure)

        var failure: TransportFailure {
            switch self {
            case .inflatesTooFar(let failure), .other(let failure): failure
            }
        }
    }

    private func exchange(_ request: TransportRequest, timeout: Duration) async throws(ExchangeFailure)
        -> TransportResponse
    {
        var outgoing = HTTPClientRequest(url: baseURL + request.path)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let sent = ContinuousClock.now
        do {
            let response = try await http.execute(outgoing, timeout: .init(timeout))
            let headersArrived = ContinuousClock.now
            let buffer = try await Self.collect(response.body, upTo: maxResponseBytes, idle: timeout)
            let wireBytes = response.headers.first(name: "Content-Length").flatMap { Int($0) } ?? buffer.readableBytes
            return TransportResponse(
                status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                body: Data(buffer.readableBytesView),
                timing: TransportTiming(
                    headers: headersArrived - sent, complete: ContinuousClock.now - sent, wireBytes: wireBytes))
        } catch {
            let failure = Self.classify(error, proxyCredentials: settings.proxy?.username != nil)
            if case .limit? = error as? NIOHTTPDecompression.DecompressionError { throw .inflatesTooFar(failure) }
            guard case .tls(let handshakeError) = failure else { throw .other(failure) }
            let reason = await explain(handshakeError, error)
            logger?.error(
                "TLS to the API failed; nothing was sent, and nothing will be until this is fixed",
                metadata: ["api": "\(baseURL)", "reason": "\(reason)"])
            throw .other(.tls(reason))
        }
    }

    /// The body, as long as it keeps coming: at most `idle` without a byte. AsyncHTTPClient's own timeout ends when
    /// the headers arrive, so a body that stalled after them — a proxy, a path that died mid-download — was waited
    /// for forever, the run with it. The wait is for progress, not for the whole body: on a slow link a large page
    /// still arrives (and the link meter makes the next ones smaller). Past it the read is cancelled, which cancels
    /// the request and closes its connection. Nor may it trickle: a byte every few seconds is never silent, and a page
    /// sent that way would hold the run for days — on average at least `minimumBytesPerSecond`, checked once the
    /// body has had two `idle`s (a page on the slowest link the daemon meets comes hundreds of times faster).
    static func collect(_ body: HTTPClientResponse.Body, upTo limit: Int, idle: Duration) async throws -> ByteBuffer {
        let progress = BodyProgress()
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                var buffer = ByteBuffer()
                for try await var chunk in body {
                    progress.arrived(chunk.readableBytes)
                    guard buffer.readableBytes + chunk.readableBytes <= limit else {
                        throw NIOTooManyBytesError(maxBytes: limit)
                    }
                    buffer.writeBuffer(&chunk)
                }
                return buffer
            }
            group.addTask {
                let started = ContinuousClock.now
                var deadline = started + idle
                while true {
                    try await Task.sleep(until: deadline, clock: .continuous)
                    let now = ContinuousClock.now
                    let next = progress.last + idle
                    guard next > now else { throw BodyDeadlinePassed(trickling: false) }
                    let elapsed = started.duration(to: now)
                    // From the second window on: a body that stopped after its first bytes is silent, not slow.
                    guard
                        elapsed < idle * 2
                            || Double(progress.bytes) >= minimumBytesPerSecond * Double(elapsed.inMilliseconds) / 1000
                    else {
                        throw BodyDeadlinePassed(trickling: true)
                    }
                    deadline = next
                }
            }
            defer { group.cancelAll() }
            guard let buffer = try await group.next() ?? nil else { throw BodyDeadlinePassed(trickling: false) }
            return buffer
        }
    }

    /// When the body's last bytes arrived (the reading task writes, the watching task reads).
    final class BodyProgress: Sendable {
        private let origin = ContinuousClock.now
        private let nanoseconds = Atomic<Int64>(0)
        private let received = Atomic<Int>(0)

        func arrived(_ count: Int) {
            let elapsed = origin.duration(to: .now).components
            nanoseconds.store(
                elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000, ordering: .relaxed)
            received.add(count, ordering: .relaxed)
        }

        /// The body's bytes so far.
        var bytes: Int { received.load(ordering: .relaxed) }

        var last: ContinuousClock.Instant { origin + .nanoseconds(nanoseconds.load(ordering: .relaxed)) }
    }

    /// The average rate below which a body still coming is no answer either (`collect`).
    static let minimumBytesPerSecond = 128.0

    struct BodyDeadlinePassed: Error, CustomStringConvertible {
        var trickling: Bool

        var description: String {
            trickling
                ? "the answer's body came too slowly: under \(Int(minimumBytesPerSecond)) bytes a second on average"
                : "the answer's body stopped coming: nothing of it for the request's timeout (api.request_timeout)"
        }
    }

    /// What went wrong in the handshake, in words: for a refused certificate, the reason read from the chain the
    /// server presents (fetched again, through the same proxy, without trusting it).
    func explain(_ detail: String, _ error: any Error) async -> String {
        guard let url = URL(string: baseURL), let host = url.host else { return detail }
        let port = url.port ?? 443
        let kind = Self.handshakeProblem(error)
        switch kind {
        case .certificateRefused, .nameMismatch:
            do {
                let chain = try await PeerCertificates.fetch(
                    host: host, port: port, settings: settings, timeout: settings.connectTimeout)
                return CertificateDiagnosis(
                    chain: chain, host: host, now: Date(), nameMismatch: kind == .nameMismatch,
                    caFileSet: settings.caFile != nil
                ).reason
            } catch {
                return "certificate for \(host) was refused (\(detail)); reading it again failed: \(error)"
            }
        case .protocolVersion:
            return
                "TLS with \(host):\(port) failed: the server offers no TLS version this workstation accepts (api.tls_min_version is \(settings.minimumTLSVersion.rawValue))"
        case .notTLS:
            return
                "TLS with \(host):\(port) failed: the server does not speak TLS there (an http:// server on an https:// URL?)"
        case .other:
            return "TLS with \(host):\(port) failed: \(detail)"
        }
    }

    enum HandshakeProblem { case certificateRefused, nameMismatch, protocolVersion, notTLS, other }

    static func handshakeProblem(_ error: any Error) -> HandshakeProblem {
        let text = String(describing: error)
        if text.contains("failedToValidateHostname") { return .nameMismatch }
        if text.contains("CERTIFICATE_VERIFY_FAILED") { return .certificateRefused }
        if text.contains("UNSUPPORTED_PROTOCOL") || text.contains("PROTOCOL_VERSION") { return .protocolVersion }
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("HTTP_REQUEST") || text.contains("PACKET_LENGTH")
            || text.contains("RECORD_TOO_LARGE")
        {
            return .notTLS
        }
        return .other
    }

    /// An answer refused while it was read: a compressed body that would inflate past the limit or is corrupt, or a
    /// body over `maxResponseBytes`. Nothing of it is used; the request's outcome is unknown, as for a cut connection.
    static func compressionFailure(_ error: any Error) -> TransportFailure? {
        if let decompression = error as? NIOHTTPDecompression.DecompressionError {
            switch decompression {
            case .limit:
                return .interrupted(
                    "the answer's compressed body inflates to more than \(TransportSettings.maxInflationRatio) times its size (a compression bomb?): refused, nothing of it was used"
                )
            case .inflationError(let code):
                return .interrupted(
                    "the answer's compressed body is corrupt (zlib error \(code)): nothing of it was used")
            case .initializationError(let code):
                return .interrupted("the answer's compressed body could not be inflated (zlib error \(code))")
            }
        }
        if let extra = error as? NIOHTTPDecompression.ExtraDecompressionError {
            return .interrupted("the answer's compressed body is corrupt (\(extra)): nothing of it was used")
        }
        if error is NIOTooManyBytesError {
            return .tooLarge("the answer is larger than the limit for one answer: refused, nothing of it was used")
        }
        return nil
    }

    /// Connect-level failures mean nothing was sent; anything after the request may have been sent means interrupted.
    /// A failed TLS handshake also means nothing was sent, and is named apart: retrying will not fix it.
    /// `proxyCredentials`: the proxy URL carries a user name, so a 407 is those credentials refused, not missing.
    static func classify(_ error: any Error, proxyCredentials: Bool = false) -> TransportFailure {
        let text = String(describing: error)
        // AsyncHTTPClient quotes the refused header in its error — the token, when it is the `Authorization` header
        // — and the error's text goes to `status` and the journal.
        if text.contains("invalidHeaderField") {
            return .interrupted(
                "a request header held a character HTTP does not allow (its value is not repeated here)")
        }
        if let failure = compressionFailure(error) { return failure }
        if let sslError = error as? NIOSSLError {
            // A handshake that failed sent nothing; a TLS error later (an unclean shutdown) cut a request short.
            if case .handshakeFailed = sslError { return .tls(text) }
            return .interrupted(text)
        }
        if error is NIOSSLExtraError { return .tls(text) }
        if error is NIOConnectionError { return .unreachable(text) }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .connectTimeout, .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout,
                .httpProxyHandshakeTimeout:
                return .unreachable(text)
            case .proxyAuthenticationRequired where proxyCredentials:
                return .unreachable(
                    "the proxy refused the user name and password of its URL (407): correct them in api.proxy (or the environment's proxy variable), with @, : and / in them percent-escaped"
                )
            case .proxyAuthenticationRequired:
                return .unreachable(
                    "the proxy asks for credentials (407): set them in api.proxy as http://USER:PASSWORD@HOST:PORT")
            case .invalidProxyResponse:
                return .unreachable("the proxy refused the tunnel to the API (its CONNECT answer was not 200): \(text)")
            default:
                return .interrupted(text)
            }
        }
        if let ioError = error as? IOError,
            [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ENOENT].contains(ioError.errnoCode)
        {
            return .unreachable(text)
        }
        if text.contains("connectionRefused") || text.contains("Connection refused") { return .unreachable(text) }
        return .interrupted(text)
    }
}
