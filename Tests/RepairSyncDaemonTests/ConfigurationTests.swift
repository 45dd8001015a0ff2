import Foundation
import RepairSyncDaemon
import RepairSyncEngine
import RepairSyncModels
import RepairSyncReliability
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The configuration file and environment: defaults, overrides, every kind of bad value naming its key.
@Suite("Configuration")
struct ConfigurationTests {
    /// A directory with a token file and a config file made of `yaml`.
    struct Files {
        let directory: TemporaryDirectory
        var configPath: String { directory.path("repairsyncd.yaml") }
        var tokenPath: String { directory.path("token") }

        init(_ yaml: String, token: String? = "s3cr3t-token") throws {
            directory = try TemporaryDirectory(prefix: "config")
            if let token {
                try token.write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.path("token"))
            }
            let text = yaml.replacingOccurrences(of: "TOKEN_FILE", with: directory.path("token"))
            try text.write(toFile: directory.path("repairsyncd.yaml"), atomically: true, encoding: .utf8)
        }

        func load(environment: [String: String] = [:]) async throws(ConfigurationError) -> DaemonConfiguration {
            try await ConfigurationLoader.load(path: configPath, environment: environment)
        }
    }

    static let minimal = """
        api:
          base_url: https://api.repairminder.example
          token_file: TOKEN_FILE
        """

    @Test("a minimal file gets every default; the token is read and never rendered")
    func defaults() async throws {
        let files = try Files(Self.minimal)
        let configuration = try await files.load()
        #expect(configuration.api.baseURL == "https://api.repairminder.example")
        #expect(configuration.token.value == "s3cr3t-token")
        #expect(configuration.sync.interval == .seconds(900))
        #expect(configuration.control.socket == "/run/repairsyncd/control.sock")
        #expect(configuration.store.path == "/var/lib/repairsyncd/replica.sqlite")
        #expect(configuration.retry == RetryPolicy(base: .seconds(1), cap: .seconds(300), maxAttempts: 10))
        #expect(configuration.conflicts[.orders] == .merge)
        #expect(configuration.conflicts[.clients] == .serverWins)
        #expect(configuration.probe.mode == .auto)
        #expect(configuration.unknownKeys.isEmpty)
        let rendered = configuration.rendered
        #expect(!rendered.contains("s3cr3t-token"))
        #expect(rendered.contains("<redacted>"))
        #expect(rendered.contains("sync.interval: 15m"))
        #expect(!"\(configuration)".contains("s3cr3t-token"), "not even in a debug print")
    }

    @Test("REPAIRSYNCD_* variables override the file; unknown keys in both are reported, not fatal")
    func environmentAndUnknownKeys() async throws {
        let files = try Files(Self.minimal + "\nsync:\n  interval: 10m\n  intervall: 5m\nshop: main street\n")
        let configuration = try await files.load(environment: [
            "REPAIRSYNCD_SYNC_INTERVAL": "2m", "REPAIRSYNCD_CONFLICTS_ORDERS": "manual", "REPAIRSYNCD_SOCKET": "/x",
            "REPAIRSYNCD_SYNC_INTERVALL": "1m", "PATH": "/usr/bin",
        ])
        #expect(configuration.sync.interval == .seconds(120))
        #expect(configuration.conflicts[.orders] == .manual)
        #expect(configuration.unknownKeys == ["shop", "sync.intervall", "REPAIRSYNCD_SYNC_INTERVALL"])
    }

    @Test("push classes: the defaults put what a waiting customer sees first; the file sets any subject's class")
    func pushPriorities() async throws {
        let defaults = try await Files(Self.minimal).load()
        let classes = Dictionary(
            uniqueKeysWithValues: defaults.pushPriorities.map { ("\($0.collection.name).\($0.subject)", $0.priority) })
        #expect(classes["orders.status"] == .critical && classes["ticket_messages.public"] == .critical)
        #expect(classes["devices.diagnosis"] == .high && classes["orders.notes"] == .normal)
        #expect(classes["ticket_messages.internal"] == .normal)
        let files = try Files(
            Self.minimal + "\npriority:\n  orders:\n    notes: critical\n  devices:\n    status: normal\n")
        let configured = try await files.load()
        #expect(configured.unknownKeys.isEmpty, "\(configured.unknownKeys)")
        let set = Dictionary(
            uniqueKeysWithValues: configured.engineConfiguration.pushPriorities.map {
                ("\($0.collection.name).\($0.subject)", $0.priority)
            })
        #expect(
            set["orders.notes"] == .critical && set["devices.status"] == .normal && set["orders.status"] == .critical)
        #expect(configured.rendered.contains("priority.orders.notes: critical"))
    }

    @Test(
        "each bad value stops the start with an error naming its key",
        arguments: [
            ("sync:\n  interval: soon", "sync.interval"),
            ("sync:\n  interval: 0s", "sync.interval"),
            ("sync:\n  page_size: 5000", "sync.page_size"),
            ("sync:\n  page_size: [1, 2]", "sync.page_size"),
            ("retry:\n  max_attempts: -1", "retry.max_attempts"),
            ("retry:\n  base: 10m\n  cap: 1m", "retry.cap"),
            ("conflicts:\n  orders: coin-flip", "conflicts.orders"),
            ("priority:\n  orders:\n    status: urgent", "priority.orders.status"),
            ("probe:\n  mode: telepathy", "probe.mode"),
            ("log:\n  level: loud", "log.level"),
            ("metrics:\n  listen: 0.0.0.0:9464", "metrics.listen"),
            ("retention:\n  days: -3", "retention.days"),
            ("store:\n  path: relative/replica.sqlite", "store.path"),
            ("api:\n  allow_insecure_http: maybe", "api.allow_insecure_http"),
        ])
    func badValues(yaml: String, key: String) async throws {
        let base =
            yaml.hasPrefix("api:")
            ? yaml.replacingOccurrences(
                of: "api:\n", with: "api:\n  base_url: https://x.example\n  token_file: TOKEN_FILE\n")
            : Self.minimal + "\n" + yaml
        let files = try Files(base)
        do {
            _ = try await files.load()
            Issue.record("accepted:\n\(base)")
        } catch {
            #expect(error.key == key, "\(error)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test("the API URL: required, http(s) only, plain http only for loopback unless allowed")
    func baseURL() async throws {
        for (yaml, accepted) in [
            ("api:\n  token_file: TOKEN_FILE", false),
            ("api:\n  base_url: ftp://x.example\n  token_file: TOKEN_FILE", false),
            ("api:\n  base_url: http://shop.example\n  token_file: TOKEN_FILE", false),
            ("api:\n  base_url: http://shop.example\n  allow_insecure_http: true\n  token_file: TOKEN_FILE", true),
            ("api:\n  base_url: http://127.0.0.1:8080/\n  token_file: TOKEN_FILE", true),
        ] {
            let files = try Files(yaml)
            do {
                let configuration = try await files.load()
                #expect(accepted, "accepted \(yaml)")
                #expect(!configuration.api.baseURL.hasSuffix("/"))
            } catch {
                #expect(!accepted, "\(yaml): \(error)")
                #expect(error.key == "api.base_url")
            }
        }
    }

    @Test(
        "a user or password in the API URL, or a fragment, is refused: the URL is printed in the start-up line, doctor and TLS errors"
    )
    func baseURLWithCredentials() async throws {
        for url in [
            "https://buser:BASESECRET@api.example", "http://buser:BASESECRET@127.0.0.1:8080",
            "https://api.example#frag",
        ] {
            let files = try Files("api:\n  base_url: \(url)\n  token_file: TOKEN_FILE")
            do {
                _ = try await files.load()
                Issue.record("accepted \(url)")
            } catch {
                #expect(error.key == "api.base_url")
                #expect(!error.description.contains("BASESECRET"), "\(error)")
            }
        }
    }

    @Test(
        "a token with a control character, a space or a line break (file or environment) is refused without being shown; a byte order mark is dropped"
    )
    func tokenCharacters() async throws {
        for token in ["SECRET\u{01}TOKEN", "SECRET\u{7F}TOKEN", "SECRET TOKEN"] {
            let files = try Files(Self.minimal, token: token)
            do {
                _ = try await files.load()
                Issue.record("accepted \(token.debugDescription)")
            } catch {
                #expect(error.key == "api.token_file")
                #expect(!error.description.contains("SECRET"), "\(error)")
            }
        }
        let bom = try Files(Self.minimal, token: "\u{FEFF}s3cr3t-token\n")
        #expect(try await bom.load().token.value == "s3cr3t-token")
        let files = try Files("api:\n  base_url: https://x.example\n")
        for token in ["ENVSECRET\r\nX-Evil: 1", "ENV\u{01}SECRET"] {
            do {
                _ = try await ConfigurationLoader.load(
                    path: files.configPath, environment: ["REPAIRSYNCD_API_TOKEN": token])
                Issue.record("accepted \(token.debugDescription)")
            } catch {
                #expect(error.key == "api.token")
                #expect(!error.description.contains("SECRET"), "\(error)")
            }
        }
    }

    @Test(
        "YAML errors name the line, never quote it (a proxy's password); a file of aliases that expands past 10,000 keys, or over 1 MiB, is refused at once"
    )
    func hostileFiles() async throws {
        let duplicate = try Files(
            "api:\n  base_url: https://x.example\n  proxy: http://puser:PROXYSECRET@proxy.lan:3128\n  proxy: none\n  token_file: TOKEN_FILE"
        )
        do {
            _ = try await duplicate.load()
            Issue.record("a duplicated key was accepted")
        } catch {
            #expect(error.description.contains("line"), "\(error)")
            #expect(!error.description.contains("PROXYSECRET"), "\(error)")
        }
        let badProxy = try Files(
            "api:\n  base_url: https://x.example\n  proxy: http://puser:PROXYSECRET@:3128\n  token_file: TOKEN_FILE")
        do {
            _ = try await badProxy.load()
            Issue.record("a proxy without a host was accepted")
        } catch {
            #expect(error.key == "api.proxy")
            #expect(!error.description.contains("PROXYSECRET") && error.description.contains("puser"), "\(error)")
        }
        // Five levels of ten aliases each: 10^5 keys from 600 bytes (minutes of CPU before the bound).
        var bomb = "m0: &m0 {k: v}\n"
        for level in 1...5 {
            let keys = (0..<10).map { "k\($0): *m\(level - 1)" }.joined(separator: ", ")
            bomb += "m\(level): &m\(level) {\(keys)}\n"
        }
        let aliases = try Files(bomb)
        do {
            _ = try await aliases.load()
            Issue.record("an alias bomb was accepted")
        } catch {
            #expect(error.message.contains("10000 keys"), "\(error)")
        }
        let large = try Files("# " + String(repeating: "x", count: 1 << 20) + "\n" + Self.minimal)
        do {
            _ = try await large.load()
            Issue.record("a 1 MiB file was accepted")
        } catch {
            #expect(error.message.contains("a configuration is a few KiB"), "\(error)")
        }
    }

    @Test(
        "a mapping where a value belongs, and a socket path too long for a Unix socket, are errors naming the key; a token file linked into place is judged by its target"
    )
    func shapesAndPaths() async throws {
        let mapping = try Files(Self.minimal + "\nsync:\n  interval: {a: 1}")
        do {
            _ = try await mapping.load()
            Issue.record("a mapping was taken for sync.interval")
        } catch {
            #expect(error.key == "sync.interval" && error.message.contains("mapping"), "\(error)")
        }
        let long = "/run/" + String(repeating: "s", count: 110) + ".sock"
        let socket = try Files(Self.minimal + "\ncontrol:\n  socket: \(long)")
        do {
            _ = try await socket.load()
            Issue.record("a socket path of \(long.utf8.count) bytes was accepted")
        } catch {
            #expect(error.key == "control.socket", "\(error)")
        }
        let linked = try Files(Self.minimal.replacingOccurrences(of: "TOKEN_FILE", with: "LINKED"))
        try FileManager.default.createSymbolicLink(
            atPath: linked.directory.path("linked"), withDestinationPath: linked.tokenPath)
        let text = try String(contentsOfFile: linked.configPath, encoding: .utf8)
            .replacingOccurrences(of: "LINKED", with: linked.directory.path("linked"))
        try text.write(toFile: linked.configPath, atomically: true, encoding: .utf8)
        #expect(try await linked.load().token.value == "s3cr3t-token")
    }

    @Test("a missing, empty or unreadable token file, and a file that is not YAML, are clear errors")
    func badFiles() async throws {
        let missing = try Files(Self.minimal, token: nil)
        await #expect(
            throws: ConfigurationError(key: "api.token_file", "the token file \(missing.tokenPath) does not exist")
        ) {
            try await missing.load()
        }
        let empty = try Files(Self.minimal, token: "\n")
        do {
            _ = try await empty.load()
            Issue.record("an empty token was accepted")
        } catch {
            #expect(error.key == "api.token_file")
        }
        let notYAML = try Files("api: [unclosed")
        do {
            _ = try await notYAML.load()
            Issue.record("broken YAML was accepted")
        } catch {
            #expect(error.key.contains(notYAML.configPath))
            #expect(error.message.contains("YAML"))
        }
    }

    @Test("the documented example configuration is valid, has no unknown key, and states the defaults")
    func exampleConfiguration() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = try String(
            contentsOf: root.appendingPathComponent("config/repairsyncd.example.yaml"), encoding: .utf8)
        // The example leaves the token to the systemd credential, as the installed unit provides it.
        let files = try Files(example)
        try "credential-token".write(toFile: files.directory.path("api-token"), atomically: true, encoding: .utf8)
        let configuration = try await files.load(environment: ["CREDENTIALS_DIRECTORY": files.directory.url.path])
        #expect(configuration.token.value == "credential-token")
        #expect(configuration.unknownKeys.isEmpty, "\(configuration.unknownKeys)")
        let defaults = try await Files(Self.minimal).load()
        var comparable = configuration
        comparable.api.baseURL = defaults.api.baseURL
        comparable.api.tokenFile = defaults.api.tokenFile
        comparable.token = defaults.token
        #expect(comparable == defaults, "the example's values are the defaults")
    }

    @Test("a token file readable by others, or owned by another user, is refused; a token in the config file too")
    func tokenFilePermissions() async throws {
        let open = try Files(Self.minimal)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: open.tokenPath)
        do {
            _ = try await open.load()
            Issue.record("a world-readable token file was accepted")
        } catch {
            #expect(error.key == "api.token_file")
            #expect(error.message.contains("chmod 600"), "\(error)")
        }
        if geteuid() == 0 {
            let foreign = try Files(Self.minimal)
            try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: foreign.tokenPath)
            do {
                _ = try await foreign.load()
                Issue.record("a token file owned by another user was accepted")
            } catch {
                #expect(error.message.contains("owned by uid 65534"), "\(error)")
            }
        } else {
            print("not checking a foreign owner: changing a file's owner needs root")
        }
        let inline = try Files(Self.minimal + "\n  token: s3cr3t-in-the-file")
        do {
            _ = try await inline.load()
            Issue.record("a token in the configuration file was accepted")
        } catch {
            #expect(error.key == "api.token")
            #expect(!error.description.contains("s3cr3t-in-the-file"), "the token is not repeated in the error")
        }
    }

    @Test("without a token file or credential, REPAIRSYNCD_API_TOKEN is used as a secret")
    func tokenFromEnvironment() async throws {
        let files = try Files("api:\n  base_url: https://x.example\n")
        let configuration = try await ConfigurationLoader.load(
            path: files.configPath, environment: ["REPAIRSYNCD_API_TOKEN": "env-secret"])
        #expect(configuration.token.value == "env-secret")
        #expect(configuration.unknownKeys.isEmpty)
        #expect(!configuration.rendered.contains("env-secret"))
    }

    @Test("the passcode key: optional, checked like the token, and it must be a 32-byte key")
    func passcodeKey() async throws {
        let none = try await Files(Self.minimal).load()
        #expect(none.passcodeKey == nil)
        #expect(none.engineConfiguration.passcodeCipher == nil)
        let files = try Files(Self.minimal)
        let keyPath = files.directory.path("passcode.key")
        try "not a key".write(toFile: keyPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        do {
            _ = try await files.load(environment: ["REPAIRSYNCD_STORE_PASSCODE_KEY_FILE": keyPath])
            Issue.record("a malformed key was accepted")
        } catch {
            #expect(error.key == "store.passcode_key_file")
        }
        try String(repeating: "1f", count: 32).write(toFile: keyPath, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        let keyed = try await files.load(environment: ["REPAIRSYNCD_STORE_PASSCODE_KEY_FILE": keyPath])
        #expect(keyed.engineConfiguration.passcodeCipher != nil)
        #expect(!keyed.rendered.contains(String(repeating: "1f", count: 32)))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)
        do {
            _ = try await files.load(environment: ["REPAIRSYNCD_STORE_PASSCODE_KEY_FILE": keyPath])
            Issue.record("a world-readable key was accepted")
        } catch {
            #expect(error.key == "store.passcode_key_file")
            #expect(error.message.contains("chmod 600"))
        }
    }

    @Test("under systemd the token comes from the credentials directory unless a file is configured")
    func credentials() async throws {
        let files = try Files("api:\n  base_url: https://x.example\n")
        try "from-credentials\n".write(toFile: files.directory.path("api-token"), atomically: true, encoding: .utf8)
        let configuration = try await files.load(environment: ["CREDENTIALS_DIRECTORY": files.directory.url.path])
        #expect(configuration.token.value == "from-credentials")
        #expect(configuration.api.tokenFile == files.directory.path("api-token"))
    }
}

/// `api.ca_file`, `api.tls_min_version`, `api.proxy` and the proxy environment.
@Suite("Configuration: TLS and proxies")
struct TransportConfigurationTests {
    typealias Files = ConfigurationTests.Files

    static func yaml(_ lines: String) -> String {
        ConfigurationTests.minimal + "\n" + lines.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
    }

    @Test("by default: the system's CAs only, TLS 1.2 or newer, no proxy")
    func defaults() async throws {
        let configuration = try await Files(ConfigurationTests.minimal).load()
        #expect(configuration.api.transport == DaemonConfiguration.Transport())
        #expect(configuration.rendered.contains("api.tls_min_version: 1.2"))
        #expect(configuration.rendered.contains("api.proxy: (none: direct)"))
    }

    @Test("a CA file, TLS 1.3 (written as a number) and a proxy with credentials; the password is never rendered")
    func configured() async throws {
        let directory = try TemporaryDirectory(prefix: "tls-config")
        let ca = try ThrowawayCA(directory: directory.path("ca"))
        let files = try Files(
            Self.yaml("ca_file: \(ca.certificatePath)\ntls_min_version: 1.3\nproxy: http://shop:pa55@proxy.lan:3128"))
        let configuration = try await files.load(environment: ["https_proxy": "http://ignored:1"])
        #expect(configuration.api.transport.caFile == ca.certificatePath)
        #expect(configuration.api.transport.minimumTLSVersion == .tls13)
        #expect(
            configuration.api.transport.proxy
                == ProxyServer(kind: .http, host: "proxy.lan", port: 3128, username: "shop", password: "pa55"))
        #expect(configuration.api.transport.proxySource == .configuration)
        #expect(configuration.rendered.contains("api.proxy: http://shop:<redacted>@proxy.lan:3128  # from api.proxy"))
        #expect(!configuration.rendered.contains("pa55"))
    }

    @Test("without api.proxy the environment's https_proxy is used unless no_proxy covers the API; `none` ignores it")
    func environment() async throws {
        let files = try Files(ConfigurationTests.minimal)
        let proxied = try await files.load(environment: ["https_proxy": "http://proxy.lan:3128"])
        #expect(proxied.api.transport.proxy?.host == "proxy.lan")
        #expect(proxied.api.transport.proxySource == .environment("https_proxy"))
        #expect(proxied.rendered.contains("# from the environment (https_proxy)"))
        let bypassed = try await files.load(environment: [
            "https_proxy": "http://proxy.lan:3128", "no_proxy": "repairminder.example",
        ])
        #expect(bypassed.api.transport.proxy == nil)
        let ignored = try await Files(Self.yaml("proxy: none")).load(environment: [
            "https_proxy": "http://proxy.lan:3128"
        ])
        #expect(ignored.api.transport.proxy == nil)
    }

    @Test(
        "each unusable TLS or proxy setting stops the start naming its key",
        arguments: [
            ("ca_file: relative.pem", "api.ca_file", "absolute path"),
            ("ca_file: /nonexistent/ca.pem", "api.ca_file", "does not exist"),
            ("ca_file: NOT_PEM", "api.ca_file", "PEM"),
            ("tls_min_version: 1.1", "api.tls_min_version", "1.2, 1.3"),
            ("tls_min_version: [1, 2]", "api.tls_min_version", "single value"),
            ("proxy: https://proxy.lan:3128", "api.proxy", "not supported"),
            ("proxy: socks5://u:p@proxy.lan", "api.proxy", "SOCKS"),
        ])
    func badValues(line: String, key: String, message: String) async throws {
        let directory = try TemporaryDirectory(prefix: "tls-config")
        try "not a certificate\n".write(toFile: directory.path("not.pem"), atomically: true, encoding: .utf8)
        let files = try Files(Self.yaml(line.replacingOccurrences(of: "NOT_PEM", with: directory.path("not.pem"))))
        do {
            _ = try await files.load()
            Issue.record("accepted: \(line)")
        } catch {
            #expect(error.key == key, "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test("a proxy environment that cannot be used is an error naming api.proxy and the variable")
    func badEnvironment() async throws {
        do {
            _ = try await Files(ConfigurationTests.minimal).load(environment: ["HTTPS_PROXY": "https://proxy.lan"])
            Issue.record("accepted")
        } catch let error as ConfigurationError {
            #expect(error.key == "api.proxy")
            #expect(error.message.contains("HTTPS_PROXY"), "\(error)")
        }
    }
}
