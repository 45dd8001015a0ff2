internal import Configuration
public import Foundation
internal import RepairSyncEngine
internal import RepairSyncModels
internal import SystemPackage
internal import Yams

#if canImport(Glibc)
    internal import Glibc
#endif

/// Reads the daemon's configuration through swift-configuration: the YAML file, with `REPAIRSYNCD_*` environment
/// variables on top (`REPAIRSYNCD_SYNC_INTERVAL=5m` overrides `sync.interval`). Every value is validated; the first
/// bad one is a `ConfigurationError` naming its key. Keys this version does not know are collected and reported.
///
/// ```swift
/// let configuration = try await ConfigurationLoader.load(path: "/etc/repairsyncd/repairsyncd.yaml")
/// ```
public enum ConfigurationLoader {
    /// Every key, with its default (nil: required, or optional without a default).
    public static let keys: [(key: String, defaultValue: String?)] =
        [
            ("api.base_url", nil),
            ("api.token_file", "/etc/repairsyncd/token"),
            ("api.allow_insecure_http", "false"),
            ("api.request_timeout", "30s"),
            ("api.retry_after_cap", "1h"),
            ("api.ca_file", nil),
            ("api.tls_min_version", "1.2"),
            ("api.proxy", nil),
            ("store.path", "/var/lib/repairsyncd/replica.sqlite"),
            ("store.group_readable", "false"),
            ("store.group_writable", "false"),
            ("store.passcode_key_file", nil),
            ("control.socket", "/run/repairsyncd/control.sock"),
            ("control.group", nil),
            ("control.public_status", "false"),
            ("control.max_connections", "512"),
            ("control.max_connections_per_uid", "128"),
            ("control.max_line_bytes", "1048576"),
            ("sync.interval", "15m"),
            ("sync.page_size", "500"),
            ("sync.shutdown_grace", "5s"),
            ("sync.push_debounce", "1s"),
            ("sync.events", "true"),
            ("sync.max_age.clients", "1h"),
            ("sync.max_age.orders", "0s"),
            ("sync.max_age.devices", "0s"),
            ("sync.max_age.tickets", "0s"),
            ("sync.max_age.ticket_messages", "0s"),
            ("retry.base", "1s"),
            ("retry.cap", "5m"),
            ("retry.max_attempts", "10"),
            ("conflicts.orders", ConflictPolicy.defaultPolicy(for: .orders).rawValue),
            ("conflicts.devices", ConflictPolicy.defaultPolicy(for: .devices).rawValue),
            ("conflicts.clients", ConflictPolicy.defaultPolicy(for: .clients).rawValue),
            ("conflicts.tickets", ConflictPolicy.defaultPolicy(for: .tickets).rawValue),
        ]
        + PushPriority.subjects.map {
            (
                "priority.\($0.collection.name).\($0.subject)",
                PushPriority.defaultPriority($0.collection, $0.subject).name
            )
        } + [
            ("probe.mode", "auto"),
            ("probe.offline_interval", "30s"),
            ("probe.online_interval", "5m"),
            ("probe.debounce", "500ms"),
            ("probe.timeout", "5s"),
            ("log.level", "info"),
            ("retention.days", "0"),
            ("metrics.textfile", nil),
            ("metrics.listen", nil),
        ]

    static let environmentPrefix = "REPAIRSYNCD_"
    /// Variables with the prefix that are not configuration keys (repairctl's socket).
    static let environmentNonKeys: Set<String> = ["REPAIRSYNCD_SOCKET"]

    /// `readSecrets: false` validates everything but leaves the token and the passcode key unread (for
    /// `repairctl doctor` run by a user who may not read them); the result's token is then empty.
    public static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment, readSecrets: Bool = true
    ) async throws(ConfigurationError) -> DaemonConfiguration {
        let fileKeys = try keysInFile(path)
        let overrides = environment.filter {
            $0.key.hasPrefix(environmentPrefix) && !environmentNonKeys.contains($0.key)
        }
        let stripped = Dictionary(
            uniqueKeysWithValues: overrides.map { (String($0.key.dropFirst(environmentPrefix.count)), $0.value) })
        let fileProvider: FileProvider<YAMLSnapshot>
        do {
            fileProvider = try await FileProvider<YAMLSnapshot>(filePath: FilePath(path))
        } catch {
            throw ConfigurationError(key: "(file \(path))", "cannot be read: \(error)")
        }
        if fileKeys.contains("api.token") {
            throw ConfigurationError(
                key: "api.token",
                "must not be in the configuration file (others may read it); use api.token_file, the api-token credential or REPAIRSYNCD_API_TOKEN"
            )
        }
        // REPAIRSYNCD_API_TOKEN is a secret to swift-configuration: redacted in its access logs and descriptions.
        let reader = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: stripped, secretsSpecifier: .specific(["API_TOKEN"])),
            fileProvider,
        ])
        let known = Set(keys.map(\.key)).union(["api.token"])
        var unknown = fileKeys.filter { !known.contains($0) }.sorted()
        let environmentNames = Dictionary(uniqueKeysWithValues: keys.map { (environmentName($0.key), $0.key) })
        unknown += stripped.keys.filter { environmentNames[$0] == nil }.map { environmentPrefix + $0 }.sorted()
        unknown.removeAll { $0 == environmentPrefix + "API_TOKEN" }
        let present = fileKeys.union(stripped.keys.compactMap { environmentNames[$0] })
        return try build(
            Values(reader: reader, present: present, environment: environment, readSecrets: readSecrets),
            unknown: unknown)
    }

    /// `api.base_url` → `API_BASE_URL` (the variable is `REPAIRSYNCD_API_BASE_URL`).
    static func environmentName(_ key: String) -> String {
        key.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
    }

    /// The dotted paths of the leaves of the YAML file (to report unknown keys), validating that it is YAML and a
    /// mapping.
    static func keysInFile(_ path: String) throws(ConfigurationError) -> Set<String> {
        // A configuration is a few KiB: a larger file is not one (and parsing it would hold up the daemon's reload).
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > maxFileBytes {
            throw ConfigurationError(
                key: "(file \(path))", "is \(size) bytes: a configuration is a few KiB (at most \(maxFileBytes))")
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(key: "(file \(path))", "cannot be read: \(error.localizedDescription)")
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(key: "(file \(path))", "is not valid YAML: \(describeYAML(error))")
        }
        guard let node else { return [] }
        guard let mapping = node.mapping else {
            throw ConfigurationError(key: "(file \(path))", "must be a mapping of keys to values")
        }
        var keys = Set<String>()
        var queue: [(String, Node)] = mapping.map { ($0.key.string ?? "?", $0.value) }
        var next = 0
        while next < queue.count {
            // Aliases of aliases multiply a small file into billions of keys ("billion laughs"): counted, bounded.
            guard queue.count <= maxKeys else {
                throw ConfigurationError(
                    key: "(file \(path))",
                    "holds more than \(maxKeys) keys once its aliases (*name) are expanded: a configuration has a few dozen"
                )
            }
            let (prefix, value) = queue[next]
            next += 1
            if let nested = value.mapping {
                queue += nested.map { (prefix + "." + ($0.key.string ?? "?"), $0.value) }
            } else {
                keys.insert(prefix)
            }
        }
        return keys
    }

    static let maxFileBytes = 1 << 20
    static let maxKeys = 10_000

    /// A YAML error as the place and the problem, quoting nothing of the file: the line quoted could be the one with
    /// a proxy's password.
    static func describeYAML(_ error: any Error) -> String {
        guard let yaml = error as? YamlError else { return "it could not be parsed" }
        switch yaml {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return "\(problem) at line \(mark.line), column \(mark.column)"
        case .duplicatedKeysInMapping(let duplicates, let context):
            return
                "a key appears twice in one mapping (\(duplicates.joined(separator: ", "))) at line \(context.mark.line)"
        case .reader(let problem, _, _, _):
            return problem
        case .dataCouldNotBeDecoded:
            return "it is not UTF-8 text"
        default:
            return "it could not be parsed"
        }
    }

    /// Reads a key as text: nil when absent, an error when present but not a single value.
    struct Values {
        let reader: ConfigReader
        let present: Set<String>
        let environment: [String: String]
        var readSecrets = true

        func text(_ key: String) throws(ConfigurationError) -> String? {
            if let value = reader.string(forKey: ConfigKey(key)) { return value }
            if present.contains(key) { throw ConfigurationError(key: key, "expected a single value, not a list") }
            // `interval: {a: 1}`: the key is there, as a mapping (its keys would be reported as unknown and the
            // default used without a word about the key itself).
            if present.contains(where: { $0.hasPrefix(key + ".") }) {
                throw ConfigurationError(key: key, "expected a single value, not a mapping")
            }
            return ConfigurationLoader.keys.first { $0.key == key }?.defaultValue
        }

        func required(_ key: String) throws(ConfigurationError) -> String {
            guard let value = try text(key), !value.isEmpty else {
                throw ConfigurationError(key: key, "is required and has no default")
            }
            return value
        }

        func withDefault(_ key: String) throws(ConfigurationError) -> String {
            guard let value = try text(key) else { throw ConfigurationError(key: key, "has no value") }
            return value
        }
    }

    static func build(_ values: Values, unknown: [String]) throws(ConfigurationError) -> DaemonConfiguration {
        typealias P = ConfigValueParsing
        let insecure = try P.boolean(values.withDefault("api.allow_insecure_http"), key: "api.allow_insecure_http")
        let baseURL = try P.baseURL(values.required("api.base_url"), key: "api.base_url", allowInsecure: insecure)
        // The token: a configured api.token_file; else the systemd credential (LoadCredential=api-token); else
        // REPAIRSYNCD_API_TOKEN; else the default token file.
        let tokenFile: String
        let token: Secret
        if !values.readSecrets {
            if values.present.contains("api.token_file") {
                tokenFile = try P.absolutePath(values.withDefault("api.token_file"), key: "api.token_file")
            } else if let credentials = values.environment["CREDENTIALS_DIRECTORY"] {
                tokenFile = credentials + "/api-token"
            } else {
                tokenFile = try values.withDefault("api.token_file")
            }
            token = Secret("")
        } else if values.present.contains("api.token_file") {
            tokenFile = try P.absolutePath(values.withDefault("api.token_file"), key: "api.token_file")
            token = try readToken(tokenFile, checkOwnership: true)
        } else if let credentials = values.environment["CREDENTIALS_DIRECTORY"] {
            tokenFile = credentials + "/api-token"
            // systemd owns the credential's permissions (0400, private to the service).
            token = try readToken(tokenFile, checkOwnership: false)
        } else if let fromEnvironment = values.reader.string(forKey: "api.token", isSecret: true),
            !fromEnvironment.isEmpty
        {
            tokenFile = "(environment REPAIRSYNCD_API_TOKEN)"
            let trimmed = fromEnvironment.trimmingCharacters(in: .whitespacesAndNewlines)
            guard HeaderSafeText.isToken(trimmed) else {
                throw ConfigurationError(
                    key: "api.token",
                    "REPAIRSYNCD_API_TOKEN holds a character that is not a printable ASCII letter, digit or sign (a space, a line break, a control character): the token cannot be sent as it is"
                )
            }
            token = Secret(trimmed)
        } else {
            tokenFile = try values.withDefault("api.token_file")
            token = try readToken(tokenFile, checkOwnership: true)
        }
        let passcodeKey = values.readSecrets ? try readPasscodeKey(values) : nil
        var conflicts: [SyncCollection: ConflictPolicy] = [:]
        for collection in [SyncCollection.orders, .devices, .clients, .tickets] {
            let key = "conflicts.\(collection.name)"
            conflicts[collection] = try P.choice(values.withDefault(key), key: key, as: ConflictPolicy.self)
        }
        var priorities: [PushPriorityRule] = []
        for (collection, subject) in PushPriority.subjects {
            let key = "priority.\(collection.name).\(subject)"
            let text = try values.withDefault(key).trimmingCharacters(in: .whitespaces)
            guard let priority = PushPriority(name: text) else {
                throw ConfigurationError(
                    key: key,
                    "expected one of \(PushPriority.allCases.map(\.name).joined(separator: ", ")), got \"\(text)\"")
            }
            priorities.append(PushPriorityRule(collection, subject, priority))
        }
        let retry = RetryPolicy(
            base: try P.duration(values.withDefault("retry.base"), key: "retry.base"),
            cap: try P.duration(values.withDefault("retry.cap"), key: "retry.cap"),
            maxAttempts: try P.integer(
                values.withDefault("retry.max_attempts"), key: "retry.max_attempts", in: 1...1000))
        guard retry.cap >= retry.base else {
            throw ConfigurationError(key: "retry.cap", "must not be less than retry.base")
        }
        return DaemonConfiguration(
            api: .init(
                baseURL: baseURL, tokenFile: tokenFile, allowInsecureHTTP: insecure,
                requestTimeout: try P.duration(values.withDefault("api.request_timeout"), key: "api.request_timeout"),
                retryAfterCap: try P.duration(values.withDefault("api.retry_after_cap"), key: "api.retry_after_cap"),
                transport: try transport(values, baseURL: baseURL)),
            store: .init(
                path: try P.absolutePath(values.withDefault("store.path"), key: "store.path"),
                groupReadable: try P.boolean(values.withDefault("store.group_readable"), key: "store.group_readable"),
                groupWritable: try P.boolean(values.withDefault("store.group_writable"), key: "store.group_writable")),
            control: .init(
                socket: try P.socketPath(values.withDefault("control.socket"), key: "control.socket"),
                group: try P.existingGroup(try values.text("control.group"), key: "control.group"),
                publicStatus: try P.boolean(values.withDefault("control.public_status"), key: "control.public_status"),
                maxConnections: try P.integer(
                    values.withDefault("control.max_connections"), key: "control.max_connections", in: 1...65536),
                maxConnectionsPerUID: try P.integer(
                    values.withDefault("control.max_connections_per_uid"), key: "control.max_connections_per_uid",
                    in: 1...65536),
                maxLineBytes: try P.integer(
                    values.withDefault("control.max_line_bytes"), key: "control.max_line_bytes", in: 1024...(64 << 20))),
            sync: .init(
                interval: try P.duration(values.withDefault("sync.interval"), key: "sync.interval"),
                pageSize: try P.integer(values.withDefault("sync.page_size"), key: "sync.page_size", in: 1...1000),
                shutdownGrace: try P.duration(
                    values.withDefault("sync.shutdown_grace"), key: "sync.shutdown_grace", allowZero: true),
                maxAge: try maxAges(values),
                pushDebounce: try P.duration(
                    values.withDefault("sync.push_debounce"), key: "sync.push_debounce", allowZero: true),
                events: try P.boolean(values.withDefault("sync.events"), key: "sync.events")),
            retry: retry,
            conflicts: conflicts,
            pushPriorities: priorities,
            probe: .init(
                mode: try P.choice(
                    values.withDefault("probe.mode"), key: "probe.mode", as: DaemonConfiguration.Probe.Mode.self),
                offlineInterval: try P.duration(
                    values.withDefault("probe.offline_interval"), key: "probe.offline_interval"),
                onlineInterval: try P.duration(
                    values.withDefault("probe.online_interval"), key: "probe.online_interval"),
                debounce: try P.duration(values.withDefault("probe.debounce"), key: "probe.debounce", allowZero: true),
                timeout: try P.duration(values.withDefault("probe.timeout"), key: "probe.timeout")),
            logLevel: try P.choice(
                values.withDefault("log.level"), key: "log.level", as: DaemonConfiguration.LogLevel.self),
            retentionDays: try P.integer(values.withDefault("retention.days"), key: "retention.days", in: 0...36_500),
            metricsTextfile: try values.text("metrics.textfile").map { text throws(ConfigurationError) in
                try P.absolutePath(text, key: "metrics.textfile")
            },
            metricsListen: try values.text("metrics.listen").map { text throws(ConfigurationError) in
                try P.loopbackAddress(text, key: "metrics.listen")
            },
            token: token,
            passcodeKey: passcodeKey,
            unknownKeys: unknown)
    }

    /// `store.passcode_key_file`, else the credential `passcode-key`, else none (passcodes are then not stored).
    static func readPasscodeKey(_ values: Values) throws(ConfigurationError) -> Secret? {
        let key = "store.passcode_key_file"
        let path: String
        let checkOwnership: Bool
        if let configured = try values.text(key) {
            path = try ConfigValueParsing.absolutePath(configured, key: key)
            checkOwnership = true
        } else if let credentials = values.environment["CREDENTIALS_DIRECTORY"],
            FileManager.default.fileExists(atPath: credentials + "/passcode-key")
        {
            path = credentials + "/passcode-key"
            checkOwnership = false
        } else {
            return nil
        }
        let secret = try readSecretFile(path, key: key, what: "key", checkOwnership: checkOwnership)
        do {
            _ = try PasscodeCipher(keyText: secret.value)
        } catch {
            throw ConfigurationError(key: key, "\(path): \(error)")
        }
        return secret
    }

    static func maxAges(_ values: Values) throws(ConfigurationError) -> [SyncCollection: Duration] {
        var ages: [SyncCollection: Duration] = [:]
        for collection in SyncCollection.pullOrder {
            let key = "sync.max_age.\(collection.name)"
            ages[collection] = try ConfigValueParsing.duration(values.withDefault(key), key: key, allowZero: true)
        }
        return ages
    }

    /// The token file: see `readSecretFile`.
    static func readToken(_ path: String, checkOwnership: Bool) throws(ConfigurationError) -> Secret {
        try readSecretFile(path, key: "api.token_file", what: "token", checkOwnership: checkOwnership)
    }

    /// A file holding one secret (`what`: "token", "key"): owned by the daemon's user and private to it (unless
    /// systemd provides it), the secret alone on one line; its content is a `Secret` from here on. Errors name `key`.
    static func readSecretFile(_ path: String, key: String, what: String, checkOwnership: Bool)
        throws(ConfigurationError) -> Secret
    {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigurationError(key: key, "the \(what) file \(path) does not exist")
        }
        if checkOwnership {
            guard let file = FileOwnership(path: path) else {
                throw ConfigurationError(key: key, "cannot inspect \(path)")
            }
            guard file.ownerID == geteuid() else {
                throw ConfigurationError(
                    key: key,
                    "\(path) is owned by uid \(file.ownerID), not by the daemon's user (uid \(geteuid())); chown it")
            }
            guard !file.readableByOthers else {
                throw ConfigurationError(
                    key: key, "\(path) is readable by others (mode \(file.octalMode)); chmod 600 it")
            }
        }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path)
        else {
            throw ConfigurationError(key: key, "the \(what) file \(path) is not readable by this user")
        }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }  // an editor's byte order mark
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty, !secret.contains("\n") else {
            throw ConfigurationError(key: key, "\(path) must hold the \(what) alone on one line")
        }
        guard HeaderSafeText.isToken(secret) else {
            throw ConfigurationError(
                key: key,
                "\(path) holds a character that is not a printable ASCII letter, digit or sign (a space, a control character, a non-ASCII letter): the \(what) cannot be sent as it is"
            )
        }
        return Secret(secret)
    }
}
