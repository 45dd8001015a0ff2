internal import Foundation
internal import RepairSyncEngine

#if canImport(Glibc)
    internal import Glibc
#endif

/// Parsing of the configuration's text values, each failure naming the key and what was expected.
enum ConfigValueParsing {
    /// `500ms`, `30s`, `15m`, `1h` (a whole number and a unit).
    static func duration(_ text: String, key: String, allowZero: Bool = false) throws(ConfigurationError) -> Duration {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for (unit, factor) in units where trimmed.hasSuffix(unit) {
            let number = trimmed.dropLast(unit.count)
            if let value = Int64(number), value >= 0, value < Int64.max / factor / 1_000_000, allowZero || value > 0 {
                return .milliseconds(value * factor)
            }
        }
        throw ConfigurationError(key: key, "expected a duration such as 500ms, 30s, 15m or 1h, got \"\(text)\"")
    }

    static func integer(_ text: String, key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw ConfigurationError(
                key: key, "expected a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
        }
        return value
    }

    static func boolean(_ text: String, key: String) throws(ConfigurationError) -> Bool {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw ConfigurationError(key: key, "expected true or false, got \"\(text)\"")
        }
    }

    static func choice<T: RawRepresentable & CaseIterable>(_ text: String, key: String, as type: T.Type)
        throws(ConfigurationError) -> T where T.RawValue == String
    {
        guard let value = T(rawValue: text.trimmingCharacters(in: .whitespaces)) else {
            let known = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(key: key, "expected one of \(known), got \"\(text)\"")
        }
        return value
    }

    /// An http(s) URL with a host and no query; plain http only for loopback unless allowed.
    static func baseURL(_ text: String, key: String, allowInsecure: Bool) throws(ConfigurationError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.query == nil
        else {
            throw ConfigurationError(
                key: key, "expected an http(s) URL such as https://api.example.com, got \"\(text)\"")
        }
        // Credentials in the URL would be printed wherever the URL is (the start-up line, doctor, TLS errors), and
        // the API takes its token as a header; a fragment would swallow every request's path.
        guard url.user == nil, url.password == nil else {
            throw ConfigurationError(
                key: key,
                "must not hold a user or password (they would be printed wherever the URL is); the API's token goes in api.token_file"
            )
        }
        guard url.fragment == nil, !trimmed.contains("#") else {
            throw ConfigurationError(key: key, "must not hold a fragment (#…): every request's path would follow it")
        }
        let loopback = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased())
        if scheme == "http", !loopback, !allowInsecure {
            throw ConfigurationError(
                key: key,
                "plain http would send the API token unencrypted to \(host); use https, or set api.allow_insecure_http: true"
            )
        }
        return trimmed.hasSuffix("/") ? String(trimmed.dropLast()) : trimmed
    }

    /// `127.0.0.1:9464`, `[::1]:9464` or `localhost:9464`: the metrics are for this machine only.
    static func loopbackAddress(_ text: String, key: String) throws(ConfigurationError)
        -> DaemonConfiguration.ListenAddress
    {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let colon = trimmed.lastIndex(of: ":"), let port = Int(trimmed[trimmed.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw ConfigurationError(
                key: key, "expected a loopback address and port such as 127.0.0.1:9464, got \"\(text)\"")
        }
        var host = String(trimmed[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard ["127.0.0.1", "::1", "localhost"].contains(host) else {
            throw ConfigurationError(
                key: key, "the metrics listen on loopback only (127.0.0.1, ::1, localhost), not \(host)")
        }
        return DaemonConfiguration.ListenAddress(host: host, port: port)
    }

    static func absolutePath(_ text: String, key: String) throws(ConfigurationError) -> String {
        guard text.hasPrefix("/") else {
            throw ConfigurationError(key: key, "expected an absolute path, got \"\(text)\"")
        }
        return text
    }

    /// An absolute path a Unix socket can have: at most 107 bytes (`sun_path` holds 108 with its terminating NUL).
    static func socketPath(_ text: String, key: String) throws(ConfigurationError) -> String {
        let path = try absolutePath(text, key: key)
        guard path.utf8.count <= 107 else {
            throw ConfigurationError(
                key: key,
                "is \(path.utf8.count) bytes long: a Unix socket's path is at most 107 bytes; choose a shorter one")
        }
        return path
    }

    /// A group that exists in the group database (a typo would otherwise leave the socket to the daemon's group).
    static func existingGroup(_ text: String?, key: String) throws(ConfigurationError) -> String? {
        guard let text else { return nil }
        guard getgrnam(text) != nil else {
            throw ConfigurationError(key: key, "no group named \"\(text)\" on this machine")
        }
        return text
    }
}
