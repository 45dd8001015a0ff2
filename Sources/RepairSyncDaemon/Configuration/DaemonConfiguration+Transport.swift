public import RepairSyncEngine

extension DaemonConfiguration {
    /// How the daemon reaches the API: trust, TLS version and proxy (`api.ca_file`, `api.tls_min_version`,
    /// `api.proxy` or the environment's proxy).
    public struct Transport: Sendable, Equatable {
        public var caFile: String?
        public var minimumTLSVersion: TransportSettings.MinimumTLSVersion
        public var proxy: ProxyServer?
        /// Where `proxy` came from (nil: no proxy).
        public var proxySource: ProxyServer.Source?

        public init(
            caFile: String? = nil, minimumTLSVersion: TransportSettings.MinimumTLSVersion = .tls12,
            proxy: ProxyServer? = nil, proxySource: ProxyServer.Source? = nil
        ) {
            self.caFile = caFile
            self.minimumTLSVersion = minimumTLSVersion
            self.proxy = proxy
            self.proxySource = proxySource
        }

        /// The HTTP client's settings; `connectTimeout` bounds the TCP connect (and the proxy's tunnel).
        public func settings(connectTimeout: Duration = .seconds(5)) -> TransportSettings {
            TransportSettings(
                caFile: caFile, minimumTLSVersion: minimumTLSVersion, proxy: proxy, connectTimeout: connectTimeout)
        }

        /// `--check-config`'s lines (a proxy's password redacted).
        var renderedLines: [(String, String)] {
            [
                ("api.ca_file", caFile ?? "(none: the system's CA store only)"),
                ("api.tls_min_version", minimumTLSVersion.rawValue),
                ("api.proxy", proxy.map { "\($0)  # from \(proxySource ?? .configuration)" } ?? "(none: direct)"),
            ]
        }
    }
}
