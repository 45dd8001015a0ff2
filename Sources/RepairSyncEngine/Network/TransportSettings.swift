public import AsyncHTTPClient
internal import Foundation
internal import NIOCore
internal import NIOHTTPCompression
internal import NIOSSL

/// How the daemon's HTTP client reaches the API: which certificates it trusts, the oldest TLS version it accepts,
/// and the proxy it goes through. One `HTTPClient` is built from it per process (`makeHTTPClient()`).
///
/// The system's CA store is always trusted (`/etc/ssl/certs`); `caFile` adds a private CA — a company CA, or a
/// TLS-inspecting proxy's — on top of it, never instead. There is no switch to turn verification off, and a request to
/// an `https` URL never falls back to plain HTTP.
///
/// ```swift
/// let settings = TransportSettings(caFile: "/etc/repairsyncd/company-ca.pem", proxy: ProxyServer(parsing: "http://proxy:3128"))
/// let http = try settings.makeHTTPClient()
/// ```
public struct TransportSettings: Sendable, Equatable {
    /// The oldest TLS version accepted (`api.tls_min_version`).
    public enum MinimumTLSVersion: String, Sendable, CaseIterable {
        case tls12 = "1.2"
        case tls13 = "1.3"
    }

    /// A PEM file with one or more CA certificates trusted in addition to the system's (`api.ca_file`).
    public var caFile: String?
    public var minimumTLSVersion: MinimumTLSVersion
    /// The proxy for the API's connections; nil connects directly.
    public var proxy: ProxyServer?
    /// How long a connection (TCP, and the proxy's CONNECT) may take before the API counts as unreachable.
    public var connectTimeout: Duration

    public init(
        caFile: String? = nil, minimumTLSVersion: MinimumTLSVersion = .tls12, proxy: ProxyServer? = nil,
        connectTimeout: Duration = .seconds(5)
    ) {
        self.caFile = caFile
        self.minimumTLSVersion = minimumTLSVersion
        self.proxy = proxy
        self.connectTimeout = connectTimeout
    }

    /// A gzip answer may inflate to at most this many times its compressed size; more is refused as it arrives (a
    /// compression bomb), long before it could fill memory. JSON pages of records compress 5 to 15 times; zlib's
    /// ceiling is about 1,000.
    public static let maxInflationRatio = 100

    /// The TLS configuration of every connection to the API: the system's roots plus `caFile`, full chain and host
    /// name verification, at least `minimumTLSVersion`.
    func tlsConfiguration() throws(TransportSettingsError) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        tls.trustRoots = .default
        tls.minimumTLSVersion = minimumTLSVersion == .tls13 ? .tlsv13 : .tlsv12
        if let caFile {
            tls.additionalTrustRoots = [.certificates(try Self.loadCertificates(caFile))]
        }
        return tls
    }

    /// An HTTP client for the API: fails a request at once when no connection can be made (the engine then goes
    /// offline and the probe takes over) instead of retrying the connect until the request times out, and never
    /// follows a redirect (which could carry the token to another host). It inflates gzip answers, up to
    /// `maxInflationRatio` times their size. Shut it down with `shutdown()` when done
    /// (a process-wide one lives as long as the process).
    public func makeHTTPClient() throws(TransportSettingsError) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = try tlsConfiguration()
        configuration.timeout.connect = .init(connectTimeout)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        configuration.proxy = proxy?.asyncHTTPClientProxy
        configuration.decompression = .enabled(limit: .ratio(Self.maxInflationRatio))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// Checks that `path` is a readable PEM file of at least one certificate (for `api.ca_file`); returns how many.
    @discardableResult
    public static func validateCAFile(_ path: String) throws(TransportSettingsError) -> Int {
        try loadCertificates(path).count
    }

    /// The certificates of a PEM file, or an error naming the file and what is wrong with it.
    static func loadCertificates(_ path: String) throws(TransportSettingsError) -> [NIOSSLCertificate] {
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path)
        else {
            throw TransportSettingsError("\(path) does not exist or is not readable by this user")
        }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(data))
        } catch {
            throw TransportSettingsError(
                "\(path) is not a PEM file of certificates (-----BEGIN CERTIFICATE-----): \(error)")
        }
        guard !certificates.isEmpty else {
            throw TransportSettingsError("\(path) holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }
}

/// A TLS or proxy setting that cannot be used, in words for the configuration error that names its key.
public struct TransportSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
