internal import AsyncHTTPClient
public import RepairSyncEngine

/// The HTTP transport of a run that needs the daemon's TLS or proxy settings (`--ca-file`, `--proxy`): a test tenant
/// behind a company CA, or reached through the shop's proxy, is reached exactly as `repairsyncd` would reach it
/// (`api.ca_file`, `api.proxy`). Shut it down when the run is over.
public final class ConformanceTransport: Sendable {
    public let transport: HTTPTransport
    let http: HTTPClient

    /// Fails with the reason when the CA file holds no usable certificate or the proxy is not understood.
    public init(baseURL: String, caFile: String?, proxy: String?) throws(TransportSettingsError) {
        var settings = TransportSettings(caFile: caFile)
        if let proxy { settings.proxy = try ProxyServer(parsing: proxy) }
        http = try settings.makeHTTPClient()
        transport = HTTPTransport(baseURL: baseURL, http: http, settings: settings)
    }

    public func shutdown() async {
        try? await http.shutdown()
    }
}
