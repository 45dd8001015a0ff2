public import Foundation
public import Logging
public import RepairSyncEngine
internal import Synchronization

/// Decides whether the API is reachable and tells the scheduler when that changes.
///
/// - **netlink**: link, address and route changes from the kernel, debounced, each followed by a health check;
///   while offline the health endpoint is also checked every `offlineInterval`, since a server can come back
///   without any local change.
/// - **poll**: the health endpoint every `offlineInterval` while offline and every `onlineInterval` while online.
///
/// `auto` uses netlink when its socket opens, and polls otherwise; the mode in use is logged and in the status.
/// When the engine's requests fail to connect, `engineWentOffline()` switches the probe to offline checking at once.
public final class ConnectivityProbe: Sendable {
    public enum Mode: String, Sendable { case netlink, poll }

    enum Event: Sendable {
        case linkChanged
        case engineOffline
    }

    let settings: DaemonConfiguration.Probe
    let health: APIClient
    let logger: Logger
    let report: @Sendable (Bool) async -> Void
    private let mailbox = Mailbox<Event>()
    private let state: Mutex<(online: Bool, mode: Mode, lastChange: Date?)>

    public init(
        settings: DaemonConfiguration.Probe, health: APIClient, logger: Logger,
        report: @escaping @Sendable (Bool) async -> Void
    ) {
        self.settings = settings
        self.health = health
        self.logger = logger
        self.report = report
        state = Mutex((true, settings.mode == .netlink ? .netlink : .poll, nil))
    }

    public var isOnline: Bool { state.withLock { $0.online } }
    public var mode: Mode { state.withLock { $0.mode } }
    public var lastChange: Date? { state.withLock { $0.lastChange } }

    public func engineWentOffline() async {
        await mailbox.post(.engineOffline)
    }

    public func run() async {
        var opened: NetlinkMonitor?
        if settings.mode != .poll {
            do {
                opened = try NetlinkMonitor()
            } catch {
                if settings.mode == .netlink {
                    logger.error(
                        "probe.mode is netlink but netlink cannot be used; polling instead",
                        metadata: ["error": "\(error)"])
                } else {
                    logger.notice("netlink unavailable; polling the API instead", metadata: ["error": "\(error)"])
                }
            }
        }
        let monitor = opened
        let mode: Mode = monitor == nil ? .poll : .netlink
        state.withLock { $0.mode = mode }
        logger.info("connectivity probe started", metadata: ["mode": "\(mode.rawValue)"])
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                if let monitor {
                    group.addTask {
                        for await _ in monitor.changes { await self.mailbox.post(.linkChanged) }
                    }
                }
                group.addTask { await self.loop(mode: mode) }
            }
        } onCancel: {
            monitor?.stop()
        }
    }

    private func loop(mode: Mode) async {
        var checkAt: ContinuousClock.Instant?
        var pollAt = ContinuousClock.now.advanced(by: isOnline ? settings.onlineInterval : settings.offlineInterval)
        while !Task.isCancelled {
            let online = isOnline
            // Netlink mode polls only while offline; poll mode always.
            let pollDeadline: ContinuousClock.Instant? = (mode == .poll || !online) ? pollAt : nil
            let deadline = [checkAt, pollDeadline].compactMap { $0 }.min()
            switch await mailbox.next(until: deadline) {
            case .linkChanged?:
                checkAt = .now.advanced(by: settings.debounce)
            case .engineOffline?:
                await set(online: false)
                pollAt = .now.advanced(by: settings.offlineInterval)
            case nil:
                guard !Task.isCancelled else { return }
                let now = ContinuousClock.now
                if let due = checkAt, due <= now {
                    checkAt = nil
                    await check()
                    pollAt = now.advanced(by: isOnline ? settings.onlineInterval : settings.offlineInterval)
                } else if let due = pollDeadline, due <= now {
                    await check()
                    pollAt = now.advanced(by: isOnline ? settings.onlineInterval : settings.offlineInterval)
                }
            }
        }
    }

    /// GET /health with the probe's short timeout; a change is reported to the scheduler.
    public func check() async {
        let reachable: Bool
        do {
            _ = try await health.health()
            reachable = true
        } catch .tls(let reason) {
            // The network and the server are there; the certificate (or TLS version) is what is wrong. That is not
            // "offline": the run that follows stops with the reason, which the status, the log and doctor show.
            logger.debug("health check: TLS refused", metadata: ["reason": "\(reason)"])
            reachable = true
        } catch {
            logger.debug("health check failed", metadata: ["error": "\(error)"])
            reachable = false
        }
        await set(online: reachable)
    }

    private func set(online: Bool) async {
        let changed = state.withLock { state -> Bool in
            guard state.online != online else { return false }
            state.online = online
            state.lastChange = Date()
            return true
        }
        guard changed else { return }
        logger.notice(
            online ? "API reachable again" : "API unreachable: offline", metadata: ["mode": "\(mode.rawValue)"])
        await report(online)
    }
}
