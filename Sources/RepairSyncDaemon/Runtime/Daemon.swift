internal import AsyncHTTPClient
internal import CSystemd
public import Foundation
internal import Logging
internal import RepairSyncControlServer
internal import RepairSyncEngine
internal import RepairSyncStore
internal import ServiceLifecycle
internal import Synchronization
internal import UnixSignals

/// `repairsyncd` itself: loads the configuration, opens the store, and runs the scheduler, the control socket and
/// the reload handler as one service group until SIGTERM/SIGINT.
public enum Daemon {
    /// Runs the daemon; returns the process exit code (0 after a clean shutdown, 78 for a bad configuration, 1 when
    /// the store cannot be opened or the socket cannot be served).
    public static func run(configPath: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        async -> Int32
    {
        let configuration: DaemonConfiguration
        do {
            configuration = try await ConfigurationLoader.load(path: configPath, environment: environment)
        } catch {
            FileHandle.standardError.write(Data("repairsyncd: \(error)\n".utf8))
            return ConfigurationError.exitCode
        }
        let level = SharedLogLevel(DaemonLogging.level(configuration.logLevel))
        DaemonLogging.bootstrap(level: level, environment: environment)
        let logger = Logger(label: "repairsyncd")
        if configuration.api.allowInsecureHTTP, configuration.api.baseURL.lowercased().hasPrefix("http://") {
            logger.warning(
                "api.allow_insecure_http is set: the API token travels unencrypted",
                metadata: ["api": "\(configuration.api.baseURL)"])
        }
        for key in configuration.unknownKeys {
            logger.warning("unknown configuration key ignored", metadata: ["key": "\(key)"])
        }
        do {
            return try await serve(
                configuration, configPath: configPath, environment: environment, level: level, logger: logger)
        } catch let error as StoreError where error.isForeign {
            // store.path names another program's database: the configuration's mistake (78), nothing touched.
            logger.critical("stopping: \(error)")
            return ConfigurationError.exitCode
        } catch {
            // The store's own words when it is the store's failure (a full disk says to free space).
            logger.critical("stopping: \(StoreFailure.classify(error).map { "\($0)" } ?? "\(error)")")
            return 1
        }
    }

    static func serve(
        _ configuration: DaemonConfiguration, configPath: String, environment: [String: String], level: SharedLogLevel,
        logger: Logger
    ) async throws -> Int32 {
        // Asked once: sd_listen_fds clears LISTEN_* for the process.
        let inheritedSocket = SystemdService.inheritedSocket()
        // The socket's group: who may use the records over the socket, and the store's files with group_writable.
        let authorization = PeerAuthorization(group: configuration.control.group, inheritedSocket: inheritedSocket)
        let access = StoreAccess(configuration.store, group: authorization.groupID)
        let storeMode = access.fileMode
        try access.prepareDirectory(for: configuration.store.path, logger: logger)
        // Before anything touches the store: one daemon per store.
        let lock = try StoreLock.acquire(forStoreAt: configuration.store.path)
        defer { withExtendedLifetime(lock) {} }
        // Copies a backup left when this store's daemon was killed while sending it: a whole replica each.
        for copy in ReplicaStore.removeCopies(of: configuration.store.path, keptAside: false) {
            logger.notice("removed a backup's copy a stopped daemon left", metadata: ["file": "\(copy)"])
        }
        // The replica is a copy of the server plus the local changes not sent yet. A damaged file is kept aside
        // untouched (those changes may still be recovered from it) and a fresh replica is synced.
        func keepAsideAndReopen(_ error: any Error) throws -> ReplicaStore {
            let kept = try ReplicaStore.keepAside(at: configuration.store.path)
            logger.critical(
                "the store is damaged: kept aside, starting with a fresh replica; local changes not yet pushed are only in the kept file",
                metadata: ["store": "\(configuration.store.path)", "kept": "\(kept)", "error": "\(error)"])
            return try ReplicaStore.open(at: configuration.store.path, fileMode: storeMode)
        }
        var store: ReplicaStore
        do {
            store = try ReplicaStore.open(at: configuration.store.path, fileMode: storeMode)
        } catch let error as StoreError where error.isCorrupt {
            store = try keepAsideAndReopen(error)
        }
        // One HTTP client for the process, with the configured trust, TLS version and proxy; the engine and the
        // probe share its connections.
        let transport = configuration.api.transport.settings()
        let http = try transport.makeHTTPClient()
        let apiLogger = Logger(label: "repairsyncd.api")
        // The engine's requests and the probe's health checks measure the same link.
        let link = LinkMeter()
        let api = APIClient(
            configuration: .init(
                baseURL: configuration.api.baseURL, token: configuration.token.value,
                requestTimeout: configuration.api.requestTimeout, retryAfterCap: configuration.api.retryAfterCap),
            clock: SystemEngineClock(),
            transport: HTTPTransport(
                baseURL: configuration.api.baseURL, http: http, settings: transport, logger: apiLogger),
            link: link)
        let metrics = SyncMetrics(textfile: configuration.metricsTextfile)
        func makeEngine(_ store: ReplicaStore) throws -> SyncEngine {
            try SyncEngine(
                store: store, api: api, configuration: configuration.engineConfiguration,
                logger: Logger(label: "repairsyncd.engine"),
                events: EngineEvents { event in
                    if case .runFinished(let report) = event { metrics.record(report) }
                })
        }
        let engine: SyncEngine
        do {
            do {
                engine = try makeEngine(store)
            } catch  where ReplicaStore.isCorruption(error) {
                // Damage the open did not meet (an index's page, a table's) met by the engine's first reads: the
                // same as a damaged file, rather than a failed start again and again.
                try? store.close()
                store = try keepAsideAndReopen(error)
                engine = try makeEngine(store)
            }
        } catch {
            // (Its opening write fails on a full disk.) The client is shut down before the error goes up: left
            // running it traps in debug builds and hides the error.
            try? await http.shutdown()
            throw error
        }
        // (After the engine's start: it may have kept the store aside and made a fresh one.)
        access.apply(toStoreAt: configuration.store.path, logger: logger)
        // Said at every start until someone deals with it: the status shows the fresh replica's outbox only.
        for kept in ReplicaStore.keptAside(beside: configuration.store.path) where kept.unsentChanges != 0 {
            logger.warning(
                "a damaged store kept aside may hold local changes that never reached the server (docs/operations.md, a damaged store)",
                metadata: [
                    "kept": "\(kept.path)", "unsent_changes": "\(kept.unsentChanges.map { "\($0)" } ?? "unknown")",
                ])
        }
        // The probe's health checks have their own client: a short timeout, and no Retry-After gate shared with
        // the engine's requests.
        let probeAPI = APIClient(
            configuration: .init(
                baseURL: configuration.api.baseURL, token: configuration.token.value,
                requestTimeout: configuration.probe.timeout),
            clock: SystemEngineClock(),
            transport: HTTPTransport(
                baseURL: configuration.api.baseURL, http: http, settings: transport, logger: apiLogger),
            link: link)
        let scheduler = SchedulerService(
            engine: engine, policy: configuration.schedulePolicy, probeSettings: configuration.probe,
            probeAPI: probeAPI,
            shutdownGrace: configuration.sync.shutdownGrace,
            retentionDays: configuration.retentionDays > 0 ? configuration.retentionDays : nil,
            // The change stream goes through the same client as every request: same trust, TLS version and proxy.
            events: configuration.sync.events
                ? .init(http: http, baseURL: configuration.api.baseURL, token: configuration.token.value, gate: api)
                : nil,
            logger: Logger(label: "repairsyncd.scheduler"))
        let running = Mutex(configuration)

        // A reload validates the whole file; a bad one is refused and the running configuration stays.
        let reload: @Sendable () async -> Result<[String], ConfigurationError> = {
            notify("RELOADING=1")
            defer { notify("READY=1") }
            do throws(ConfigurationError) {
                let next = try await ConfigurationLoader.load(path: configPath, environment: environment)
                level.value = DaemonLogging.level(next.logLevel)
                await scheduler.reconfigure(next.schedulePolicy)
                // Against what the daemon started with, not the last reload: a second reload of the same changed
                // file still needs the restart the first one named.
                let needRestart = restartKeys(from: configuration, to: next)
                running.withLock { $0 = next }
                logger.notice(
                    "configuration reloaded",
                    metadata: [
                        "unknown_keys": "\(next.unknownKeys)",
                        "restart_needed_for": "\(needRestart.isEmpty ? "nothing" : needRestart.joined(separator: ","))",
                    ])
                return .success(next.unknownKeys)
            } catch {
                logger.error(
                    "configuration reload refused; the running configuration stays", metadata: ["error": "\(error)"])
                return .failure(error)
            }
        }
        let stopper = GroupStopper()
        let controlLogger = Logger(label: "repairsyncd.control")
        let audit = ControlAudit(logger: controlLogger)
        let refusals = ControlAudit(logger: controlLogger, lines: .refusals)
        let router = ControlRouter(
            services: ControlServices(
                engine: engine, scheduler: scheduler, metrics: metrics, logger: controlLogger,
                configPath: configPath, configuration: { running.withLock { $0 } }, reload: reload,
                shutdown: { await stopper.stop() }),
            authorization: authorization, audit: audit, refusals: refusals)
        let server = ControlServer(
            path: configuration.control.socket,
            limits: .init(
                maxLineBytes: configuration.control.maxLineBytes, maxConnections: configuration.control.maxConnections,
                maxConnectionsPerUID: configuration.control.maxConnectionsPerUID),
            socketMode: configuration.control.publicStatus ? 0o666 : 0o660,
            inheritedDescriptor: inheritedSocket,
            dispatcher: router.dispatcher)
        let control = ControlService(server: server, audits: [audit, refusals], logger: logger) {
            var listening = configuration.control.socket
            if let inherited = server.inheritedDescriptor {
                let file = SocketFile(descriptor: inherited)
                listening = file?.path ?? listening
                logger.info(
                    "serving the control socket systemd passed (socket activation)",
                    metadata: ["socket": "\(listening)", "group_gid": "\(authorization.groupID)"])
                // The unit decides where the socket is and who may connect, not the configuration: say so when
                // they disagree, rather than let an admin wonder why a setting does nothing.
                if let file, file.path != configuration.control.socket {
                    logger.warning(
                        "control.socket is not the socket systemd passed; the unit's ListenStream= decides (systemctl edit repairsyncd.socket)",
                        metadata: ["control.socket": "\(configuration.control.socket)", "serving": "\(file.path)"])
                }
                if let file, configuration.control.publicStatus, file.mode & 0o006 != 0o006 {
                    logger.warning(
                        "control.public_status asks for a socket every user can reach; the unit's SocketMode= decides: set SocketMode=0666 (systemctl edit repairsyncd.socket)",
                        metadata: ["mode": "0\(String(file.mode, radix: 8))"])
                }
            } else {
                applyGroup(configuration.control.group, to: configuration.control.socket, logger: logger)
            }
            notify("READY=1\nSTATUS=listening on \(listening)")
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: scheduler)]
        if let listen = configuration.metricsListen {
            let server = MetricsServer(host: listen.host, port: listen.port, metrics: metrics, logger: logger) { port in
                logger.info("metrics listening", metadata: ["url": "http://\(listen.host):\(port)/metrics"])
                notify("STATUS=metrics on http://\(listen.host):\(port)/metrics")
            }
            services.append(.init(service: server.service()))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services + [
                    .init(service: control),
                    .init(service: ReloadService { _ = await reload() }),
                    // Last, so it is the first to hear of a shutdown (STOPPING=1 at once).
                    .init(
                        service: SystemdService(engine: engine, scheduler: scheduler, metrics: metrics, logger: logger)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        stopper.group.withLock { $0 = group }
        logger.info(
            "repairsyncd starting",
            metadata: [
                "api": "\(configuration.api.baseURL)", "store": "\(configuration.store.path)",
                "proxy":
                    "\(transport.proxy.map { "\($0) (from \(configuration.api.transport.proxySource ?? .configuration))" } ?? "none")",
                "ca_file": "\(transport.caFile ?? "none")",
                "tls_min_version": "\(transport.minimumTLSVersion.rawValue)",
                "tasks_on": "\(TaskPlacement.onEventLoops ? "event_loops" : "default_pool")",
            ])
        do {
            try await group.run()
        } catch {
            try? store.close()
            try? await http.shutdown()
            throw error
        }
        // The engine has stopped: the WAL goes into the database file, and the file alone is the replica.
        do {
            try store.close()
        } catch {
            logger.warning("the store's WAL stays beside it: closing the store failed", metadata: ["error": "\(error)"])
        }
        try? await http.shutdown()
        logger.info("repairsyncd stopped")
        return 0
    }

    /// Lets a control method end the service group (after `purge`).
    final class GroupStopper: Sendable {
        let group = Mutex<ServiceGroup?>(nil)

        func stop() async {
            await group.withLock { $0 }?.triggerGracefulShutdown()
        }
    }

    /// Keys whose new values only take effect after a restart.
    static func restartKeys(from old: DaemonConfiguration, to new: DaemonConfiguration) -> [String] {
        var keys: [String] = []
        if old.api != new.api || old.token != new.token { keys.append("api") }
        if old.store != new.store { keys.append("store") }
        if old.control != new.control { keys.append("control") }
        if old.retry != new.retry { keys.append("retry") }
        if old.conflicts != new.conflicts { keys.append("conflicts") }
        if old.probe != new.probe { keys.append("probe") }
        if old.pushPriorities != new.pushPriorities { keys.append("priority") }
        if old.retentionDays != new.retentionDays { keys.append("retention") }
        if old.metricsTextfile != new.metricsTextfile || old.metricsListen != new.metricsListen {
            keys.append("metrics")
        }
        if old.passcodeKey != new.passcodeKey, !keys.contains("store") { keys.append("store") }
        if old.sync.pageSize != new.sync.pageSize || old.sync.shutdownGrace != new.sync.shutdownGrace
            || old.sync.events != new.sync.events
        {
            keys.append("sync")
        }
        return keys
    }

    /// `control.group`: the socket's group, so its members may connect (mode 0660) — and the socket's directory
    /// when it is the daemon's own 0750 one (made by the control server), so that they can reach the socket.
    static func applyGroup(_ group: String?, to path: String, logger: Logger) {
        guard let group else { return }
        guard let entry = getgrnam(group) else {
            logger.error(
                "control.group does not exist; the socket keeps the daemon's group", metadata: ["group": "\(group)"])
            return
        }
        var files = [path]
        let directory = (path as NSString).deletingLastPathComponent
        if let owner = FileOwnership(path: directory), owner.ownerID == geteuid(), owner.mode == 0o750 {
            files.append(directory)
        }
        for file in files where chown(file, UInt32.max, entry.pointee.gr_gid) != 0 {
            logger.error(
                "cannot give the socket to its group",
                metadata: ["group": "\(group)", "file": "\(file)", "errno": "\(errno)"])
        }
    }

    /// sd_notify: a no-op unless systemd started us with NOTIFY_SOCKET.
    static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }
}
