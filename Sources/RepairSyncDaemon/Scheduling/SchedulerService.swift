public import AsyncHTTPClient
public import Foundation
public import Logging
public import RepairSyncEngine
public import RepairSyncModels
public import ServiceLifecycle
internal import Synchronization

/// Runs the engine when the schedule says so (`SyncSchedule`), sleeping in between: start-up, the periodic timer,
/// reconnects from the probe, `repairctl sync`, and local changes (debounced). The replacement for an iOS app's
/// BGAppRefreshTask and reachability callbacks.
public final class SchedulerService: Service, Sendable {
    enum Event: Sendable {
        case manual(Set<SyncCollection>?)
        case localChange
        case paused(Bool)
        case connectivity(Bool)
        case reconfigure(SchedulePolicy)
        /// A run (any run: scheduled, or `sync` with `wait` over the socket) could not reach the API.
        case engineOffline
        /// A run started over the socket (`runNow`) ended: its outcome plans the next run as a scheduled one's does.
        case manualRunFinished(SyncReport, collections: Set<SyncCollection>, full: Bool)
        /// The event stream announced changes (collected in `serverChanges`: one such event waits at a time).
        case serverChange
    }

    /// How the scheduler opens the server's change stream (`sync.events`): the daemon's HTTP client (its TLS, CA file
    /// and proxy), the API's base URL and token.
    public struct EventStreamConnection: Sendable {
        public var http: HTTPClient
        public var baseURL: String
        public var token: String
        public var settings: EventStreamClient.Settings
        /// The engine's API client, whose Retry-After gate the stream shares.
        public var gate: APIClient?

        public init(
            http: HTTPClient, baseURL: String, token: String, settings: EventStreamClient.Settings = .init(),
            gate: APIClient? = nil
        ) {
            self.http = http
            self.baseURL = baseURL
            self.token = token
            self.settings = settings
            self.gate = gate
        }
    }

    /// What `status` shows of the schedule.
    public struct Snapshot: Sendable {
        public var paused: Bool
        public var online: Bool
        public var nextRunAt: Date?
        public var nextRunReason: String?
        /// The last retention pass: when, and what it removed.
        public var lastRetentionAt: Date?
        public var lastRetention: Retention.Report?
    }

    let engine: SyncEngine
    let logger: Logger
    let shutdownGrace: Duration
    /// `retention.days`: the engine's retention runs after each successful full run (nil: off).
    let retentionDays: Int?
    public let probe: ConnectivityProbe
    /// The server's change stream (nil: `sync.events` is off).
    public let events: EventStreamClient?
    private let mailbox = Mailbox<Event>()
    private let serverChanges = ServerChangeInbox()
    /// A `.localChange` was posted and no run has started since: a change queued meanwhile needs no event of its own
    /// (the push it waits for is planned, or will be when the event is taken). It only moves the debounce on
    /// (`lastLocalChange`), which the loop reads each time it wakes — so a tool queueing a change every millisecond
    /// wakes the scheduler once, not a thousand times a second.
    private let localChangePosted = Atomic<Bool>(false)
    /// When the last local change was queued, as nanoseconds from `clockBase`; and the last such time the schedule
    /// has seen (a change it has seen plans nothing again: after a reconnect, whose run pushes everything, it would
    /// plan a push-only run of its own).
    private let lastLocalChange = Atomic<Int64>(0)
    private let foldedLocalChange = Atomic<Int64>(-1)
    private let clockBase = ContinuousClock.now
    private let schedule: Mutex<SyncSchedule<ContinuousClock.Instant>>
    private let snapshotValue: Mutex<Snapshot>
    /// Told each time idle memory was handed back (tests wait on it).
    private let onIdleMemoryReleased: (@Sendable (IdleMemory.Report) -> Void)?

    public init(
        engine: SyncEngine, policy: SchedulePolicy, probeSettings: DaemonConfiguration.Probe, probeAPI: APIClient,
        shutdownGrace: Duration, retentionDays: Int? = nil, events: EventStreamConnection? = nil, logger: Logger,
        onIdleMemoryReleased: (@Sendable (IdleMemory.Report) -> Void)? = nil
    ) {
        self.engine = engine
        self.onIdleMemoryReleased = onIdleMemoryReleased
        self.retentionDays = retentionDays
        self.logger = logger
        self.shutdownGrace = shutdownGrace
        schedule = Mutex(SyncSchedule(policy: policy, now: .now))
        snapshotValue = Mutex(Snapshot(paused: false, online: true, nextRunAt: nil, nextRunReason: nil))
        let (mailbox, probeLogger) = (self.mailbox, Logger(label: "repairsyncd.probe"))
        probe = ConnectivityProbe(settings: probeSettings, health: probeAPI, logger: probeLogger) { online in
            await mailbox.post(.connectivity(online))
        }
        let changes = serverChanges
        self.events = events.map { connection in
            EventStreamClient(
                settings: connection.settings, http: connection.http, baseURL: connection.baseURL,
                token: connection.token,
                gate: connection.gate, logger: Logger(label: "repairsyncd.events")
            ) { notice in
                let added: Set<SyncCollection> =
                    switch notice {
                    case .changed(let collection): [collection]
                    case .everything: Set(SyncCollection.allCases)
                    }
                if changes.add(added) { await mailbox.post(.serverChange) }
            }
        }
    }

    public var snapshot: Snapshot { snapshotValue.withLock { $0 } }

    /// The periodic interval in force.
    public var interval: Duration { schedule.withLock { $0.policy.interval } }

    // MARK: Requests

    /// `repairctl sync` without waiting: run as soon as possible (nil: everything).
    public func requestRun(_ collections: Set<SyncCollection>?) async { await mailbox.post(.manual(collections)) }

    /// Runs now and waits for the report (`sync` with `wait` over the socket). Its outcome plans what comes next as
    /// a scheduled run's does: a run the server rate-limited comes back after Retry-After, a failed one on the
    /// backoff — the status is never left waiting for the next periodic run. Nil: everything.
    public func runNow(_ collections: Set<SyncCollection>?) async -> SyncReport {
        let report: SyncReport
        if let collections {
            report = await engine.sync(collections)
        } else {
            report = await engine.performFullSync()
        }
        await mailbox.post(
            .manualRunFinished(
                report, collections: collections ?? Set(SyncCollection.allCases), full: collections == nil))
        return report
    }

    /// A change was queued locally: push soon (debounced; not while paused). Only the first change after a run
    /// started posts an event; later ones (20 shop tools queueing at once, or one queueing a change a millisecond)
    /// note their time, which moves the debounce on when the scheduler next wakes.
    public func localChange() async {
        let since = ContinuousClock.now - clockBase
        lastLocalChange.store(
            since.components.seconds * 1_000_000_000 + since.components.attoseconds / 1_000_000_000,
            ordering: .releasing)
        guard !localChangePosted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        await mailbox.post(.localChange)
    }

    /// The last local change's time, if one was posted and no run has started since and the schedule has not seen
    /// it yet; from now on it has. (Only the scheduler's loop calls this.)
    private func unseenLocalChange() -> ContinuousClock.Instant? {
        guard localChangePosted.load(ordering: .acquiring) else { return nil }
        let last = lastLocalChange.load(ordering: .acquiring)
        guard foldedLocalChange.exchange(last, ordering: .acquiringAndReleasing) != last else { return nil }
        return clockBase + .nanoseconds(last)
    }

    public func setPaused(_ paused: Bool) async {
        snapshotValue.withLock { $0.paused = paused }
        await mailbox.post(.paused(paused))
        logger.info("automatic sync \(paused ? "paused" : "resumed")")
    }

    /// A reloaded configuration's interval and ages.
    public func reconfigure(_ policy: SchedulePolicy) async { await mailbox.post(.reconfigure(policy)) }

    // MARK: Running

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.probe.run() }
            group.addTask { await self.loop() }
            if let events = self.events { group.addTask { await events.run() } }
            group.addTask {
                // Runs started over the socket bypass the schedule; their connection failures count all the same. Only
                // changes of phase wake this (not each queued change's count).
                var wasOffline = false
                for await status in await self.engine.statusUpdates(wanted: { $0.phase != $1.phase }) {
                    let offline = status.phase == .offline
                    if offline, !wasOffline { await self.mailbox.post(.engineOffline) }
                    wasOffline = offline
                }
            }
            try? await gracefulShutdown()
            // Shutdown: no new runs; the run in progress ends at its next request boundary, waiting at most the
            // grace period for the request in flight (its outcome is committed, or replayed after a restart).
            engine.requestStop()
            let engine = engine
            let grace = shutdownGrace
            let logger = logger
            await withTaskGroup(of: Void.self) { race in
                // (A task group waits for all its children: the engine's stop is not cancellable, so the grace is
                // kept by cancelling the run, which ends the stop.)
                race.addTask { await engine.stop() }
                race.addTask {
                    try? await Task.sleep(for: grace)
                    guard !Task.isCancelled else { return }
                    // The request in flight outlived the grace (a server that hangs, a body that trickles): the run
                    // is cancelled, its request abandoned — in doubt, replayed after the restart — rather than the
                    // daemon outliving systemd's stop timeout and being killed anyway.
                    logger.warning("the run in progress did not end within the shutdown grace: cancelled")
                    await engine.cancelActiveRun()
                }
                await race.next()
                race.cancelAll()
            }
            group.cancelAll()
        }
    }

    private func loop() async {
        // When to hand back idle memory: this long after the last run ended, if no run came since (nil: nothing to
        // hand back, or never).
        var releaseMemoryAt: ContinuousClock.Instant?
        while !Task.isCancelled {
            // Changes queued since the scheduler last looked move the push's debounce on (up to its maximum delay).
            let lastChange = unseenLocalChange()
            let planned = schedule.withLock { schedule in
                if let lastChange { schedule.localChange(now: lastChange) }
                return schedule.nextRun()
            }
            publish(planned)
            let now = ContinuousClock.now
            guard let run = planned, run.at <= now else {
                if let due = releaseMemoryAt, due <= now {
                    releaseMemoryAt = nil
                    await releaseIdleMemory()
                    continue
                }
                let wake = [planned?.at, releaseMemoryAt].compactMap { $0 }.min()
                if let event = await mailbox.next(until: wake) {
                    if case .manualRunFinished = event { releaseMemoryAt = releaseMemoryDue() }
                    await apply(event)
                }
                continue
            }
            schedule.withLock { $0.runStarted(run) }
            // The run pushes every change queued before it: one queued from here on posts again.
            localChangePosted.store(false, ordering: .releasing)
            let report: SyncReport
            if run.full, run.collections == Set(SyncCollection.allCases) {
                report = await engine.performFullSync()
            } else {
                report = await engine.sync(run.collections, dashboard: run.full)
            }
            let outcome = Self.outcome(of: report)
            let nextChangeDue = report.nextChangeDueMilliseconds.map { Duration.milliseconds($0) }
            schedule.withLock {
                $0.runFinished(
                    run, outcome: outcome, now: .now, random: Double.random(in: 0...1), nextChangeDue: nextChangeDue)
            }
            if outcome == .offline { snapshotValue.withLock { $0.online = false } }
            if outcome == .succeeded, run.full, let retentionDays { await applyRetention(days: retentionDays) }
            logger.debug("scheduled run done", metadata: ["reason": "\(run.reason.rawValue)", "outcome": "\(outcome)"])
            releaseMemoryAt = releaseMemoryDue()
        }
    }

    private func releaseMemoryDue() -> ContinuousClock.Instant? {
        schedule.withLock { $0.policy.releaseMemoryAfter }.map { ContinuousClock.now + $0 }
    }

    /// The daemon has been quiet since its last run: SQLite's caches, the heap's free memory and the binary's
    /// start-up pages go back to the system (`IdleMemory`), once per quiet stretch.
    private func releaseIdleMemory() async {
        let report = await IdleMemory.release(store: engine.store)
        logger.debug(
            "idle memory released",
            metadata: [
                "rss_before_kib": "\(report.residentBefore / 1024)", "rss_after_kib": "\(report.residentAfter / 1024)",
                "executable_kib": "\(report.executableBytes / 1024)",
            ])
        onIdleMemoryReleased?(report)
    }

    static func outcome(of report: SyncReport) -> SyncSchedule<ContinuousClock.Instant>.Outcome {
        if report.offline { return .offline }
        if report.succeeded { return .succeeded }
        if let wait = report.retryAfterMilliseconds {
            return .rateLimited(.milliseconds(wait), progressed: report.madeProgress)
        }
        return report.madeProgress ? .failedAfterProgress : .failed
    }

    private func applyRetention(days: Int) async {
        do {
            let report = try await engine.applyRetention(days: days)
            snapshotValue.withLock {
                $0.lastRetention = report
                $0.lastRetentionAt = Date()
            }
            if report.total > 0 {
                logger.notice(
                    "retention removed old records",
                    metadata: [
                        "orders": "\(report.orders)", "devices": "\(report.devices)", "tickets": "\(report.tickets)",
                        "messages": "\(report.messages)", "resolved_conflicts": "\(report.conflicts)",
                    ])
                // After the snapshot: the status this publishes shows the pass.
                await engine.refreshCounts()
            }
        } catch {
            logger.error("retention failed", metadata: ["error": "\(error)"])
        }
    }

    private func apply(_ event: Event) async {
        if case .engineOffline = event {
            snapshotValue.withLock { $0.online = false }
            schedule.withLock { $0.connectivityChanged(online: false, now: .now) }
            await events?.connectivityChanged(online: false)
            await probe.engineWentOffline()
            return
        }
        if case .serverChange = event {
            let collections = serverChanges.take()
            schedule.withLock { $0.serverChanged(collections, now: .now) }
            return
        }
        let now = ContinuousClock.now
        // The event plans a push even for a change the loop already folded in (a run may have started since).
        let lastChange = unseenLocalChange() ?? now
        schedule.withLock { schedule in
            switch event {
            case .manual(let collections): schedule.manualRequested(collections, now: now)
            case .localChange: schedule.localChange(now: lastChange)
            case .paused(let paused): schedule.setPaused(paused)
            case .connectivity(let online): schedule.connectivityChanged(online: online, now: now)
            case .engineOffline, .serverChange: break
            case .manualRunFinished(let report, let collections, let full):
                schedule.runFinished(
                    .init(at: now, reason: .manual, collections: collections, full: full),
                    outcome: Self.outcome(of: report),
                    now: now, random: Double.random(in: 0...1),
                    nextChangeDue: report.nextChangeDueMilliseconds.map { Duration.milliseconds($0) })
            case .reconfigure(let policy): schedule.reconfigure(policy, now: now)
            }
        }
        if case .connectivity(let online) = event {
            snapshotValue.withLock { $0.online = online }
            await engine.connectivityChanged(online: online)
            await events?.connectivityChanged(online: online)
        }
    }

    private func publish(_ run: SyncSchedule<ContinuousClock.Instant>.Run?) {
        let now = ContinuousClock.now
        let wall = Date()
        snapshotValue.withLock { snapshot in
            snapshot.nextRunReason = run?.reason.rawValue
            snapshot.nextRunAt = run.map { run in
                let wait = now.duration(to: run.at).components
                return wall.addingTimeInterval(max(0, Double(wait.seconds) + Double(wait.attoseconds) / 1e18))
            }
        }
    }
}
