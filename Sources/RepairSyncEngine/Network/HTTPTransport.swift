public import AsyncHTTPClient
internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix

/// `APITransport` over AsyncHTTPClient: requests go to `baseURL` + the request's path; bodies are read whole, up to
/// `maxResponseBytes`.
public struct HTTPTransport: APITransport {
    public let baseURL: String
    public let maxResponseBytes: Int
    private let http: HTTPClient

    /// The process-wide client for API requests. Unlike `HTTPClient.shared` it fails a request as soon as a connection
    /// cannot be made (the engine then goes offline and the probe takes over) instead of retrying the connect until
    /// the request times out, and it never follows a redirect (which could carry the token to another host).
    public static let defaultHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(5)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public init(baseURL: String, maxResponseBytes: Int = 64 << 20, http: HTTPClient = HTTPTransport.defaultHTTPClient) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.maxResponseBytes = maxResponseBytes
        self.http = http
    }

    public func send(_ request: TransportRequest, timeout: Duration) async throws(TransportFailure) -> TransportResponse {
        var outgoing = HTTPClientRequest(url: baseURL + request.path)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await http.execute(outgoing, timeout: .init(timeout))
            let buffer = try await response.body.collect(upTo: maxResponseBytes)
            return TransportResponse(
                status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                body: Data(buffer.readableBytesView))
        } catch {
            throw Self.classify(error)
        }
    }

    /// Connect-level failures mean nothing was sent; anything after the request may have been sent means interrupted.
    static func classify(_ error: any Error) -> TransportFailure {
        let text = String(describing: error)
        if error is NIOConnectionError { return .unreachable(text) }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .connectTimeout, .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout:
                return .unreachable(text)
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
