internal import AsyncHTTPClient
public import Foundation

/// The proxy the API's connections go through: an HTTP proxy that tunnels with `CONNECT` (optionally with Basic
/// credentials), or a SOCKSv5 proxy — what AsyncHTTPClient supports. Either way the API's host *name* goes to the
/// proxy unresolved (`CONNECT api.example:443`, a SOCKS domain address), so a shop whose DNS only resolves it through
/// the proxy still works, and TLS runs end to end through the tunnel (the proxy sees no request and no token).
///
/// ```swift
/// let proxy = try ProxyServer(parsing: "http://user:secret@proxy.shop.lan:3128")
/// proxy.description  // "http://user:<redacted>@proxy.shop.lan:3128"
/// ```
public struct ProxyServer: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable { case http, socks5 }

    public var kind: Kind
    public var host: String
    public var port: Int
    public var username: String?
    /// Never printed or logged (`description` redacts it).
    public var password: String?

    public init(kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// `http://[user:password@]host[:port]` (port 80 when left out), `socks5://host[:port]` or `socks5h://…` (1080).
    /// A bare `host:port` is taken as an HTTP proxy, as curl does. Percent-escapes in the credentials are decoded.
    public init(parsing text: String) throws(TransportSettingsError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw TransportSettingsError(
                "expected a proxy URL such as http://proxy.example:3128 or socks5://proxy.example:1080, got \"\(Self.redacted(text))\""
            )
        }
        switch scheme {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        case "https":
            throw TransportSettingsError(
                "a TLS connection to the proxy itself (https://) is not supported; use http:// — the API's own TLS still runs end to end through the tunnel"
            )
        default:
            throw TransportSettingsError("proxy scheme \(scheme) is not supported; use http:// (CONNECT) or socks5://")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil else {
            throw TransportSettingsError("a proxy URL has no path or query, got \"\(Self.redacted(text))\"")
        }
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? (kind == .http ? 80 : 1080)
        guard (1...65535).contains(port) else { throw TransportSettingsError("proxy port \(port) is out of range") }
        username = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 }
        password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 }
        if kind == .socks5, username != nil {
            throw TransportSettingsError(
                "SOCKS proxies with a user name and password are not supported; use an HTTP proxy")
        }
    }

    /// `text` with the password of its user information (`user:PASSWORD@`) replaced: for error messages about a
    /// proxy URL that does not parse, which quote what was written.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard start <= at, let colon = text[start..<at].firstIndex(of: ":") else { return text }
        return String(text[...colon]) + "<redacted>" + String(text[at...])
    }

    public var description: String {
        let credentials = username.map { user in "\(user)\(password == nil ? "" : ":<redacted>")@" } ?? ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(kind.rawValue)://\(credentials)\(shownHost):\(port)"
    }

    var asyncHTTPClientProxy: HTTPClient.Configuration.Proxy {
        switch kind {
        case .socks5:
            return .socksServer(host: host, port: port)
        case .http:
            let authorization = username.map { HTTPClient.Authorization.basic(username: $0, password: password ?? "") }
            return .server(host: host, port: port, authorization: authorization)
        }
    }
}

extension ProxyServer {
    /// Where a proxy setting came from, for `--check-config` and the log.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        case configuration
        /// An environment variable, named.
        case environment(String)

        public var description: String {
            switch self {
            case .configuration: "api.proxy"
            case .environment(let name): "the environment (\(name))"
            }
        }
    }

    /// The proxy the environment asks for, the way curl reads it: `https_proxy` (or `HTTPS_PROXY`) for an https URL,
    /// `http_proxy` for an http one (never `HTTP_PROXY`, which a CGI request can set), else `all_proxy`/`ALL_PROXY`;
    /// none when `no_proxy`/`NO_PROXY` covers the host, and none for a loopback host (`localhost`, 127.0.0.0/8, ::1:
    /// a proxy cannot reach this machine's own loopback), as Go's and Python's clients do. Returns the proxy and the
    /// variable it came from.
    public static func fromEnvironment(_ environment: [String: String], for url: URL) throws(TransportSettingsError)
        -> (proxy: ProxyServer, variable: String)?
    {
        guard let host = url.host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")),
            !isLoopback(host)
        else { return nil }
        let names =
            url.scheme?.lowercased() == "https"
            ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        guard let name = names.first(where: { !(environment[$0] ?? "").trimmingCharacters(in: .whitespaces).isEmpty })
        else { return nil }
        let noProxy = environment["no_proxy"] ?? environment["NO_PROXY"] ?? ""
        if bypasses(noProxy, host: host, port: url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)) {
            return nil
        }
        do {
            return (try ProxyServer(parsing: environment[name]!), name)
        } catch {
            throw TransportSettingsError("\(name): \(error.description)")
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "::1"
            || IPv4Block("127.0.0.0", prefix: 8)!.contains(host)
    }

    /// Whether `no_proxy` covers `host`: `*` covers everything; an entry `example.com` or `.example.com` covers that
    /// host and its subdomains; an IP address or `host:port` entry must match exactly; a CIDR block (`10.0.0.0/8`)
    /// covers the IPv4 addresses inside it.
    public static func bypasses(_ noProxy: String, host: String, port: Int) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        for raw in noProxy.split(separator: ",") {
            var entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if entry.isEmpty { continue }
            if entry == "*" { return true }
            if let slash = entry.firstIndex(of: "/") {
                if let network = IPv4Block(String(entry[..<slash]), prefix: Int(entry[entry.index(after: slash)...])),
                    network.contains(host)
                {
                    return true
                }
                continue
            }
            // `host:port` (but not a bare IPv6 address).
            if let colon = entry.lastIndex(of: ":"), entry.filter({ $0 == ":" }).count == 1 {
                guard Int(entry[entry.index(after: colon)...]) == port else { continue }
                entry = String(entry[..<colon])
            }
            entry = entry.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            if entry.hasPrefix(".") { entry.removeFirst() }
            if host == entry || host.hasSuffix("." + entry) { return true }
        }
        return false
    }

    /// An IPv4 network in CIDR notation.
    struct IPv4Block {
        let network: UInt32
        let mask: UInt32

        init?(_ address: String, prefix: Int?) {
            guard let prefix, (0...32).contains(prefix), let value = Self.parse(address) else { return nil }
            mask = prefix == 0 ? 0 : UInt32.max << (32 - prefix)
            network = value & mask
        }

        func contains(_ host: String) -> Bool {
            guard let value = Self.parse(host) else { return false }
            return value & mask == network
        }

        static func parse(_ text: String) -> UInt32? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var value: UInt32 = 0
            for part in parts {
                guard let byte = UInt8(part) else { return nil }
                value = value << 8 | UInt32(byte)
            }
            return value
        }
    }
}
