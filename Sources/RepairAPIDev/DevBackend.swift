internal import Foundation
internal import GRDB
internal import Hummingbird
internal import HummingbirdCore
internal import HummingbirdTLS
public import Logging
internal import NIOCore
internal import NIOSSL
internal import RepairSyncModels
internal import ServiceLifecycle
internal import Synchronization
internal import UnixSignals

/// The development backend: a real HTTP server implementing docs/api.md over its own SQLite storage.
///
/// ```swift
/// let backend = try DevBackend(options: .init(tokens: ["dev-token": "Grace"], admin: true))
/// try backend.seed(SeedOptions(orders: 1000))
/// try await backend.run { port in print("listening on http://127.0.0.1:\(port)") }
/// ```
public final class DevBackend: Sendable {
    public struct Options: Sendable {
        public var host: String
        public var port: Int
        /// The SQLite file; nil for a temporary file removed when the backend is deinitialised.
        public var databasePath: String?
        /// Accepted tokens and the display name of the user each stands for.
        public var tokens: [String: String]
        public var admin: Bool
        public var logRequests: Bool
        /// Deliberate departures from the contract, on from the start (also switchable under `/admin/defects`).
        public var defects: Set<Defect>
        /// Serve HTTPS with this certificate and key instead of plain HTTP.
        public var tls: TLS?
        /// Serve `GET /api/v1/events` (false: 404, as a server without the stream); switchable under `/admin/events`.
        public var events: Bool
        /// Between the stream's heartbeats.
        public var eventsHeartbeat: Duration
        /// Compress `/api/v1` answers of at least `compressionThreshold` bytes with gzip for clients that accept it.
        public var compression: Bool
        public var compressionThreshold: Int

        public init(
            host: String = "127.0.0.1", port: Int = 0, databasePath: String? = nil, tokens: [String: String],
            admin: Bool = false, logRequests: Bool = false, defects: Set<Defect> = [], tls: TLS? = nil,
            events: Bool = true, eventsHeartbeat: Duration = .seconds(15),
            compression: Bool = true, compressionThreshold: Int = 1024
        ) {
            self.events = events
            self.eventsHeartbeat = eventsHeartbeat
            self.compression = compression
            self.compressionThreshold = compressionThreshold
            self.host = host
            self.port = port
            self.databasePath = databasePath
            self.tokens = tokens
            self.admin = admin
            self.logRequests = logRequests
            self.defects = defects
            self.tls = tls
        }

        /// The URL scheme clients use: `https` with TLS, else `http`.
        public var scheme: String { tls == nil ? "http" : "https" }
    }

    /// HTTPS: a PEM certificate chain (the server's certificate first, then any intermediates) and its PEM key.
    public struct TLS: Sendable {
        public var certificateChainPath: String
        public var privateKeyPath: String
        /// The newest TLS version offered (nil: the newest there is) — to try clients that require a newer one.
        public var maximumVersion: String?

        public init(certificateChainPath: String, privateKeyPath: String, maximumVersion: String? = nil) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
            self.maximumVersion = maximumVersion
        }

        /// The server's TLS configuration, or an error naming the file that cannot be used.
        func serverConfiguration() throws -> TLSConfiguration {
            let chain: [NIOSSLCertificate]
            do {
                chain = try NIOSSLCertificate.fromPEMFile(certificateChainPath)
            } catch {
                throw TLSSetupError("cannot read the certificate chain \(certificateChainPath): \(error)")
            }
            guard !chain.isEmpty else { throw TLSSetupError("\(certificateChainPath) holds no PEM certificate") }
            let key: NIOSSLPrivateKey
            do {
                key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
            } catch {
                throw TLSSetupError("cannot read the private key \(privateKeyPath): \(error)")
            }
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            switch maximumVersion {
            case nil: break
            case "1.2": configuration.maximumTLSVersion = .tlsv12
            case "1.3": configuration.maximumTLSVersion = .tlsv13
            case let other?: throw TLSSetupError("unknown TLS version \(other) (1.2 or 1.3)")
            }
            return configuration
        }
    }

    public struct TLSSetupError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    public let options: Options
    let store: BackendStore
    let injector = FaultInjector()
    let defects: DefectSwitches
    private let temporaryDirectory: URL?
    private let logger: Logger
    private let running = Mutex<ServiceGroup?>(nil)

    public init(options: Options, logger: Logger = Logger(label: "repair-api-dev")) throws {
        self.options = options
        self.logger = logger
        self.defects = DefectSwitches(options.defects)
        if let path = options.databasePath {
            temporaryDirectory = nil
            store = try BackendStore(path: path)
        } else {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("repair-api-dev-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            temporaryDirectory = directory
            store = try BackendStore(path: directory.appendingPathComponent("backend.sqlite").path)
        }
        store.events.switches = .init(
            mode: options.events ? .on : .off, heartbeats: true, heartbeatInterval: options.eventsHeartbeat)
    }

    deinit {
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    /// Generates a deterministic data set. Returns false (and writes nothing) when the database already has records.
    @discardableResult
    public func seed(_ seedOptions: SeedOptions) throws -> Bool {
        let empty = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM records") == 0 }
        guard empty else { return false }
        var seeder = Seeder(options: seedOptions)
        try seeder.run(into: store)
        // Seeded records are not announced: nothing before them can be resumed from.
        store.events.rebase(
            head: try store.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seq'") ?? 0
            })
        return true
    }

    /// Serves until `shutdown()`, SIGTERM/SIGINT (when `handlingSignals`) or cancellation. `onListening` receives
    /// the bound port (useful with port 0). A graceful shutdown lets requests in flight finish.
    public func run(
        handlingSignals: Bool = false, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let router = Router(context: DevRequestContext.self)
        var requestLogger = logger
        if !options.logRequests { requestLogger.logLevel = .warning }
        router.add(middleware: RequestLogMiddleware(counters: store.counters, logger: requestLogger))
        router.add(middleware: JSONErrorMiddleware())
        router.add(middleware: AdminGateMiddleware(enabled: options.admin))
        router.add(
            middleware: AuthMiddleware(
                users: Dictionary(
                    uniqueKeysWithValues: options.tokens.sorted(by: { $0.key < $1.key }).enumerated().map {
                        ($0.element.key, BackendStore.User(id: "usr_api_\($0.offset + 1)", name: $0.element.value))
                    })))
        // Only where `GET /admin/writes` can read it: it collects and decodes the body of every write.
        if options.admin { router.add(middleware: WriteLogMiddleware(log: store.counters.writes)) }
        router.add(middleware: FaultMiddleware(injector: injector, counters: store.counters))
        router.add(
            middleware: CompressionMiddleware(
                enabled: options.compression, threshold: options.compressionThreshold, counters: store.counters))
        router.add(middleware: DefectMiddleware(defects: defects, store: store))
        APIRoutes(store: store, injector: injector, defects: defects).register(on: router)
        EventRoutes(hub: store.events, adminEnabled: options.admin).register(on: router)
        if options.admin {
            AdminRoutes(store: store, injector: injector).register(on: router)
            DefectRoutes(defects: defects).register(on: router)
        }

        let injector = injector
        var serverLogger = logger
        serverLogger.logLevel = .warning
        let defects = self.defects
        // Outbound, the last handler writes first: the server's clock sets Date, then the defect may drop it.
        let http1: HTTPServerBuilder = .http1(
            configuration: .init(additionalChannelHandlers: [
                DateHeaderDefectHandler(defects: defects), ServerClockHandler(injector: injector),
            ]))
        let server: HTTPServerBuilder =
            if let tls = options.tls { try .tls(http1, tlsConfiguration: tls.serverConfiguration()) } else { http1 }
        let app = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "repair-api-dev"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: serverLogger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: app), .init(service: EventStreamCloser(hub: store.events))],
                gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [],
                logger: serverLogger))
        running.withLock { $0 = group }
        try await group.run()
    }

    /// Stops a running server gracefully: no new connections, requests in flight complete.
    public func shutdown() async {
        guard let group = running.withLock({ $0 }) else { return }
        await group.triggerGracefulShutdown()
    }
}
