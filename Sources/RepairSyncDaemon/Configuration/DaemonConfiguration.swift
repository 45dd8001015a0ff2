public import RepairSyncEngine
public import RepairSyncModels

/// Everything `repairsyncd` reads from its configuration file and environment (docs/operations.md lists every key).
/// Every key has a default except `api.base_url`.
public struct DaemonConfiguration: Sendable, Equatable {
    public struct API: Sendable, Equatable {
        public var baseURL: String
        public var tokenFile: String
        /// Plain http is refused for anything but loopback unless this is set.
        public var allowInsecureHTTP: Bool
        public var requestTimeout: Duration
        /// The longest wait a server's `Retry-After` can impose (a server clock far ahead must not silence the shop).
        public var retryAfterCap: Duration
        /// Trust, TLS version and proxy (`api.ca_file`, `api.tls_min_version`, `api.proxy`).
        public var transport: Transport
    }

    public struct Store: Sendable, Equatable {
        public var path: String
        /// 0640 instead of 0600, for local tools of the daemon's group that read the replica.
        public var groupReadable: Bool
        /// The state directory (setgid), the database and its `-wal`/`-shm` files usable by the socket's group
        /// (`control.group`): 2770 and 0660, for shop tools that write rows and then call `queueChange`
        /// (docs/integration.md).
        public var groupWritable: Bool
    }

    public struct Control: Sendable, Equatable {
        public var socket: String
        /// The group that may use the socket (mode 0660); nil keeps the daemon's own group.
        public var group: String?
        /// Let every local user connect and read the status (socket 0666); changes stay restricted to the group.
        public var publicStatus: Bool
        public var maxConnections: Int
        public var maxConnectionsPerUID: Int
        public var maxLineBytes: Int
    }

    public struct Sync: Sendable, Equatable {
        public var interval: Duration
        public var pageSize: Int
        /// How long a SIGTERM waits for an HTTP request in flight.
        public var shutdownGrace: Duration
        /// Per collection, how old its last pull may be before a periodic run pulls it again (zero: every run).
        public var maxAge: [SyncCollection: Duration]
        /// A burst of local changes is pushed this long after the last one.
        public var pushDebounce: Duration
        /// Keep the server's change stream open and pull what it announces (`sync.events`).
        public var events: Bool = true
    }

    public struct Probe: Sendable, Equatable {
        public enum Mode: String, Sendable, CaseIterable { case auto, netlink, poll }
        public var mode: Mode
        public var offlineInterval: Duration
        public var onlineInterval: Duration
        public var debounce: Duration
        public var timeout: Duration
    }

    public enum LogLevel: String, Sendable, CaseIterable { case trace, debug, info, notice, warning, error, critical }

    public var api: API
    public var store: Store
    public var control: Control
    public var sync: Sync
    public var retry: RetryPolicy
    public var conflicts: [SyncCollection: ConflictPolicy]
    /// The class each kind of change is pushed in (`priority.<collection>.<subject>`).
    public var pushPriorities: [PushPriorityRule]
    public var probe: Probe
    public var logLevel: LogLevel
    /// Days after which finished orders and closed tickets leave the replica (0: never).
    public var retentionDays: Int
    /// Where to write the Prometheus text exposition after each run (node_exporter's textfile collector).
    public var metricsTextfile: String?
    /// A loopback address to serve the metrics on (`GET /metrics`), e.g. 127.0.0.1:9464.
    public var metricsListen: ListenAddress?

    public struct ListenAddress: Sendable, Equatable {
        public var host: String
        public var port: Int
    }

    /// The API token, read from `api.token_file` (or the systemd credential). Never printed or logged.
    public var token: Secret
    /// The key that seals device passcodes in the replica (`store.passcode_key_file` or the credential
    /// `passcode-key`); without one, passcodes are not stored.
    public var passcodeKey: Secret?

    /// Keys in the file or the environment that this version does not know (reported, not fatal).
    public var unknownKeys: [String]

    public static let defaultPath = "/etc/repairsyncd/repairsyncd.yaml"

    /// The scheduler's settings.
    public var schedulePolicy: SchedulePolicy {
        SchedulePolicy(
            interval: sync.interval, jitter: 0.1, maxAge: sync.maxAge, retryBase: min(retry.base * 5, sync.interval),
            pushDebounce: sync.pushDebounce, pushMaxDelay: max(sync.pushDebounce * 5, .seconds(1)))
    }

    /// The engine's settings.
    public var engineConfiguration: EngineConfiguration {
        EngineConfiguration(
            pageSize: sync.pageSize, policies: conflicts, retry: retry,
            passcodeCipher: passcodeKey.flatMap { try? PasscodeCipher(keyText: $0.value) },
            pushPriorities: pushPriorities)
    }
}

/// A value that must not appear in logs or printed configuration: its description is always redacted.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}
