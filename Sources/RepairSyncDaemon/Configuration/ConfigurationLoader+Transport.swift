internal import Foundation
internal import RepairSyncEngine

extension ConfigurationLoader {
    /// `api.ca_file`, `api.tls_min_version` and `api.proxy` (or, without it, the `https_proxy`/`no_proxy`
    /// environment) as the HTTP client's settings. Each bad value is an error naming its key.
    static func transport(_ values: Values, baseURL: String) throws(ConfigurationError) -> DaemonConfiguration.Transport
    {
        var caFile: String?
        if let text = try values.text("api.ca_file"), !text.isEmpty {
            let path = try ConfigValueParsing.absolutePath(text, key: "api.ca_file")
            do {
                try TransportSettings.validateCAFile(path)
            } catch {
                throw ConfigurationError(key: "api.ca_file", error.description)
            }
            caFile = path
        }
        let version = try ConfigValueParsing.choice(
            values.withDefault("api.tls_min_version"), key: "api.tls_min_version",
            as: TransportSettings.MinimumTLSVersion.self)
        var proxy: ProxyServer?
        var source: ProxyServer.Source?
        if let text = try values.text("api.proxy")?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            if !["none", "direct"].contains(text.lowercased()) {
                do {
                    proxy = try ProxyServer(parsing: text)
                } catch {
                    throw ConfigurationError(key: "api.proxy", error.description)
                }
                source = .configuration
            }
        } else if let url = URL(string: baseURL) {
            do {
                if let found = try ProxyServer.fromEnvironment(values.environment, for: url) {
                    (proxy, source) = (found.proxy, .environment(found.variable))
                }
            } catch {
                throw ConfigurationError(
                    key: "api.proxy",
                    "\(error.description) (set api.proxy to a proxy, or to none to ignore the environment)")
            }
        }
        return DaemonConfiguration.Transport(
            caFile: caFile, minimumTLSVersion: version, proxy: proxy, proxySource: source)
    }
}
