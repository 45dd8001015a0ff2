internal import Foundation
internal import GRDB
public import Logging
public import RepairSyncModels
public import RepairSyncStore

/// Bidirectional sync between the replica and a server that follows docs/api.md.
///
/// One run at a time: push due local changes, then pull the requested collections. A request made during a run
/// does not start a second one; all such requests share one follow-up run. Status is observable and always
/// ends a run in `completed` (then `idle`), `error` or `offline` — never stuck in `syncing`.
public actor SyncEngine {
    public nonisolated let store: ReplicaStore
    public nonisolated let api: APIClient
    public nonisolated let changes: LocalChanges
    public nonisolated let configuration: EngineConfiguration
    nonisolated let clock: any EngineClock
    nonisolated let logger: Logger
    nonisolated let events: EngineEvents
    nonisolated let stopFlag = StopFlag()

    private var current = EngineStatus()
    private var observers: [UUID: StatusObserver] = [:]
    private var active: Task<SyncReport, Never>?
    private var followUp: (request: RunRequest, task: Task<SyncReport, Never>)?
    private var runNumber = 0
    /// Collections an admin asked to pull again from the beginning; the next run resets them before its pull.
    private var pendingResets: Set<SyncCollection> = []
    /// The generation of the outbox and conflict counts the status shows (`StatusCounts`): older readings are not
    /// shown over them.
    private var countsGeneration: Int64

    struct RunRequest: Sendable {
        var collections: Set<SyncCollection>
        var dashboard: Bool

        mutating func merge(_ other: RunRequest) {
            collections.formUnion(other.collections)
            dashboard = dashboard || other.dashboard
        }
    }

    /// Opens the engine on a store. Changes that were being sent when the process stopped become pending again;
    /// they are re-sent with their original idempotency keys.
    public init(
        store: ReplicaStore, api: APIClient, configuration: EngineConfiguration = EngineConfiguration(),
        clock: any EngineClock = SystemEngineClock(), logger: Logger = Logger(label: "repairsyncd.engine"),
        events: EngineEvents = EngineEvents()
    ) throws {
        self.store = store
        self.api = api
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.events = events
        changes = LocalChanges(store: store, clock: clock, cipher: configuration.passcodeCipher)
        try store.write { db in
            try Outbox.recoverInFlight(db)
            // The classes as configured now: every waiting change is classed again.
            try PushPriorityTable.install(configuration.pushPriorities, db)
        }
        let (status, counts) = try Self.counts(store, into: EngineStatus())
        current = status
        counts.apply(to: &current)
        countsGeneration = counts.generation
        // A local change's commit publishes the counts it made, before its caller is answered: one read in the
        // commit's own transaction, whatever number of changes share it.
        store.groupCommit.reportBatches(read: StatusCounts.read) { [weak self] counts in await self?.show(counts) }
    }

    // MARK: Runs

    /// Push, then pull every collection and refresh the dashboard snapshot.
    @discardableResult
    public func performFullSync() async -> SyncReport {
        await request(RunRequest(collections: Set(SyncCollection.allCases), dashboard: true))
    }

    /// Pull only `collections` (after pushing anything pending). An empty set pushes only.
    @discardableResult
    public func sync(_ collections: Set<SyncCollection>) async -> SyncReport {
        await request(RunRequest(collections: collections, dashboard: false))
    }

    /// Push, pull `collections`, and refresh the dashboard snapshot when `dashboard` is set (a scheduled full run
    /// that skips collections not yet due).
    @discardableResult
    public func sync(_ collections: Set<SyncCollection>, dashboard: Bool) async -> SyncReport {
        await request(RunRequest(collections: collections, dashboard: dashboard))
    }

    /// Pulls `collections` again from the beginning (after pushing anything pending): the next run forgets their
    /// cursors and marks their records before its pull, then sweeps what the server no longer has
    /// (`Puller.reset`). Pending changes are kept.
    @discardableResult
    public func resync(_ collections: Set<SyncCollection>) async -> SyncReport {
        requestResync(collections)
        return await request(RunRequest(collections: collections, dashboard: false))
    }

    /// Registers a resync of `collections` for the next run to carry out (which pulls them whatever it was asked
    /// for); for a caller that starts that run itself, e.g. through a scheduler.
    public func requestResync(_ collections: Set<SyncCollection>) {
        pendingResets.formUnion(collections)
    }

    /// Ends the current run at its next request boundary (the request in flight finishes and is committed), and
    /// refuses new runs. Returns when no run is active. For shutdown.
    public func stop() async {
        requestStop()
        if let active { _ = await active.value }
        if let followUp { _ = await followUp.task.value }
    }

    /// Cancels the run in progress and its follow-up: the request in flight is abandoned (its change stays in doubt
    /// and is replayed under its key after a restart, as after a kill); what the run committed stays. For a shutdown
    /// whose grace has passed — a request that hangs, a body that trickles, must not keep the daemon past systemd's
    /// stop timeout.
    public func cancelActiveRun() {
        active?.cancel()
        followUp?.task.cancel()
    }

    /// Sets the stop flag without waiting (callable from anywhere, e.g. a signal handler's task).
    public nonisolated func requestStop() { stopFlag.set() }

    private func request(_ request: RunRequest) async -> SyncReport {
        if followUp != nil {
            followUp!.request.merge(request)
            return await followUp!.task.value
        }
        if let active {
            let task = Task { [active] in
                _ = await active.value
                return await self.startFollowUp()
            }
            followUp = (request, task)
            return await task.value
        }
        return await start(request).value
    }

    private func startFollowUp() async -> SyncReport {
        guard let request = followUp?.request else {
            return await start(RunRequest(collections: [], dashboard: false)).value
        }
        followUp = nil
        return await start(request).value
    }

    private func start(_ request: RunRequest) -> Task<SyncReport, Never> {
        runNumber += 1
        let number = runNumber
        let task = Task { await self.execute(request, number: number) }
        active = task
        return task
    }

    private func execute(_ request: RunRequest, number: Int) async -> SyncReport {
        let started = clock.uptime()
        publish { $0.phase = .syncing(step: .pushing, progress: 0) }
        let pusher = Pusher(
            store: store, api: api, configuration: configuration, clock: clock, logger: logger, events: events,
            stopFlag: stopFlag)
        let puller = Puller(
            store: store, api: api, configuration: configuration, clock: clock, logger: logger, events: events,
            stopFlag: stopFlag)
        var report = SyncReport(
            run: number, stop: nil, offline: false, pushed: 0, pushFailures: 0, dead: 0, conflicts: 0, pulled: [:],
            deleted: 0, durationMilliseconds: 0)
        var stop: SyncStop?
        // What was done is reported even when the run stops early.
        var pushed = Pusher.Report()
        var pulled = Puller.Report()
        var resynced: [String] = []
        var queuedInserts = false
        do {
            try stopFlag.check()
            // Reachability and a millisecond clock offset (last-write-wins needs it) before anything else.
            do {
                try await api.measureClockOffset()
            } catch {
                throw SyncStop.from(error)
            }
            // Edits other programs wrote into the replica and never queued go out like any other.
            let rebase = recordRebase(for: nil)
            do {
                // A thousand rows per transaction, so the writer is never held long.
                while true {
                    let looked = try await store.write { db in try rebase.queueEditedRows(limit: 1000, db) }
                    // Rows another program inserted are counted from here on (their creates are queued now).
                    if looked.queued > 0 { queuedInserts = true }
                    for row in looked.refused {
                        logger.warning(
                            "a row another program inserted cannot be created as it is", metadata: ["row": "\(row)"])
                    }
                    if looked.looked < 1000 { break }
                }
            } catch {
                throw SyncStop.failed("store: \(error)")
            }
            try await pusher.run(into: &pushed) { progress in
                await self.publish { $0.phase = .syncing(step: .pushing, progress: progress) }
            }
            // A resync asked for meanwhile is carried out by this run, before its pull: no other run is active.
            let resets = pendingResets
            let collections = SyncCollection.pullOrder.filter {
                request.collections.contains($0) || resets.contains($0)
            }
            for collection in SyncCollection.pullOrder where resets.contains(collection) {
                let marked = try await puller.reset(collection)
                pendingResets.remove(collection)
                resynced.append(collection.name)
                logger.notice(
                    "resync: the cursor is forgotten and the collection is pulled again from the beginning; records the server no longer has are checked, then removed",
                    metadata: ["collection": "\(collection)", "marked": "\(marked)"])
            }
            if !collections.isEmpty {
                publish { $0.phase = .syncing(step: .pulling, progress: 0) }
                try await puller.run(collections, into: &pulled) { progress in
                    await self.publish { $0.phase = .syncing(step: .pulling, progress: progress) }
                }
            }
            // The pull can release changes the push had to leave: a create in doubt that the feed showed applied
            // settles, and what waited for it (an order's devices, a later edit) is due now. They go in this run, not
            // 15 minutes later, and the pull follows them (the server's side of a create — an order's device count,
            // a client's order count — comes through the feeds). Only then (an edit made during the pull waits for
            // the run its edit asks for), and once: what this leaves waits for the next run.
            if pulled.settledCreates > 0, try await hasDueChanges() {
                publish { $0.phase = .syncing(step: .pushing, progress: 0) }
                let before = pushed.pushed
                try await pusher.run(into: &pushed) { progress in
                    await self.publish { $0.phase = .syncing(step: .pushing, progress: progress) }
                }
                if pushed.pushed > before {
                    publish { $0.phase = .syncing(step: .pulling, progress: 0) }
                    let failedBefore = pulled.failed
                    try await puller.run(collections.filter { failedBefore[$0] == nil }, into: &pulled) { progress in
                        await self.publish { $0.phase = .syncing(step: .pulling, progress: progress) }
                    }
                }
            }
            if request.dashboard {
                publish { $0.phase = .syncing(step: .dashboard, progress: 0) }
                await refreshDashboard()
            }
            if collections.isEmpty, pushed.failed > 0, pushed.outages == pushed.failed,
                pushed.pushed + pushed.dead + pushed.conflicts == 0
            {
                // A run that only pushed and met the server down for every change it tried (502/503/504, a proxy's
                // page) reached nothing: no success — the status and its last success would say the shop was in step
                // all through an outage of queued changes. (A change failing on its own, a 500, is that change's
                // retry: the run is no failure, or one such change would bring a full retry run after each attempt.)
                throw SyncStop.failed(
                    "no change could be pushed: \(pushed.failed) failed, the last with \(pushed.lastFailure ?? "an error"); each is tried again at its own time"
                )
            }
            if !pulled.failed.isEmpty {
                // Every other collection pulled; the run still ends in error, naming the ones that did not.
                throw SyncStop.failed(
                    "pull failed for "
                        + SyncCollection.pullOrder.compactMap { c in pulled.failed[c].map { "\(c.name) (\($0))" } }
                        .joined(separator: "; "))
            }
        } catch let error as SyncStop {
            stop = error
        } catch {
            stop = .failed("\(error)")
        }
        report.pushed = pushed.pushed
        report.pushedByCollection = pushed.pushedByCollection
        report.pushFailures = pushed.failed
        report.dead = pushed.dead
        report.conflicts = pushed.conflicts + pulled.conflicts
        report.pulled = Dictionary(uniqueKeysWithValues: pulled.records.map { ($0.key.name, $0.value) })
        report.deleted = pulled.deleted
        report.requestedCollections = SyncCollection.pullOrder
            .filter { request.collections.contains($0) || resynced.contains($0.name) }.map(\.name)
        report.resynced = resynced
        report.failedCollections = Dictionary(uniqueKeysWithValues: pulled.failed.map { ($0.key.name, $0.value) })
        report.rewound = pulled.rewound
        report.staleCopies = pulled.stale
        report.stop = stop?.description
        if case .offline? = stop { report.offline = true }
        let now = clock.now()
        if case .rateLimited? = stop {
            report.retryAfterMilliseconds = api.remainingWait?.inMilliseconds ?? 0
        }
        let horizon = configuration.retry.horizon
        if let due = (try? await store.read({ db in try Outbox.nextAttemptAt(db, now: now, horizon: horizon) })) ?? nil
        {
            // Never further than the retry cap: a time beyond it was set before the wall clock went back.
            let wait = due.millisecondsSince1970 - now.millisecondsSince1970
            report.nextChangeDueMilliseconds = wait > configuration.retry.horizon.inMilliseconds ? 0 : max(0, wait)
        }
        report.durationMilliseconds = (clock.uptime() - started).inMilliseconds
        finish(
            report, stop: stop,
            recounting: pulled.resized.union(pushed.resized).union(queuedInserts ? [.clients, .orders, .devices] : []))
        active = nil
        events.emit(.runFinished(report))
        logger.info(
            "sync run finished",
            metadata: [
                "run": "\(number)", "result": "\(stop.map { "\($0)" } ?? "ok")", "pushed": "\(report.pushed)",
                "pulled": "\(report.pulled.values.reduce(0, +))", "deleted": "\(report.deleted)",
                "conflicts": "\(report.conflicts)", "duration_ms": "\(report.durationMilliseconds)",
            ])
        return report
    }

    /// Whether a change is due to be pushed now.
    private func hasDueChanges() async throws(SyncStop) -> Bool {
        let now = clock.now()
        let horizon = configuration.retry.horizon
        do {
            return try await !store.read { db in try Outbox.due(db, now: now, horizon: horizon, limit: 1) }.isEmpty
        } catch {
            throw .failed("reading the outbox: \(error)")
        }
    }

    private func finish(_ report: SyncReport, stop: SyncStop?, recounting: Set<SyncCollection>) {
        let now = clock.now()
        publish { status in
            status.lastSyncAt = now
            status.metrics.runs += 1
            status.metrics.lastDurationMilliseconds = report.durationMilliseconds
            status.metrics.totalDurationMilliseconds += report.durationMilliseconds
            switch stop {
            case nil:
                status.metrics.successes += 1
                status.lastSuccessAt = now
                status.phase = .completed
            case .offline?:
                status.metrics.failures += 1
                status.phase = .offline
            case .stopped?:
                status.phase = .idle
            case .authentication?:
                status.metrics.failures += 1
                status.phase = .error("authentication failed")
            case let other?:
                status.metrics.failures += 1
                status.phase = .error(other.description)
            }
        }
        refreshCounts(recounting: recounting)
        if stop == nil {
            let hold = configuration.completedHold
            let run = report.run
            let clock = clock
            Task {
                try? await clock.sleep(for: hold)
                self.returnToIdle(afterRun: run)
            }
        }
    }

    private func returnToIdle(afterRun run: Int) {
        guard runNumber == run, active == nil, current.phase == .completed else { return }
        publish { $0.phase = .idle }
    }

    private func refreshDashboard() async {
        for period in configuration.dashboardPeriods {
            do {
                let reply = try await api.dashboard(period: period)
                _ = try api.decode(DashboardStats.self, reply.body)
                let body = String(decoding: reply.body, as: UTF8.self)
                let now = clock.now()
                try await store.write { db in
                    try db.execute(
                        sql: """
                            INSERT INTO dashboard_snapshots (period, body, fetched_at) VALUES (?, ?, ?)
                            ON CONFLICT(period) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at
                            """, arguments: [period, body, now.millisecondsSince1970])
                }
            } catch {
                logger.warning(
                    "dashboard snapshot not refreshed", metadata: ["period": "\(period)", "error": "\(error)"])
            }
        }
    }

    // MARK: Status

    /// The status, with the link figures as measured now (they change with every answer, between publications).
    public var status: EngineStatus {
        var status = current
        status.link = api.link.quality
        return status
    }

    /// The current status, then every change — or only the changes `wanted` picks (from the previous status to the
    /// next) — until the stream is dropped. `latestOnly`: a reader that falls behind gets the latest status, not
    /// every one (for observers of the present, such as systemd's status line).
    public func statusUpdates(
        latestOnly: Bool = false,
        wanted: @escaping @Sendable (_ previous: EngineStatus, _ next: EngineStatus) -> Bool = { _, _ in true }
    ) -> AsyncStream<EngineStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: EngineStatus.self, bufferingPolicy: latestOnly ? .bufferingNewest(1) : .unbounded)
        let id = UUID()
        observers[id] = StatusObserver(continuation: continuation, wanted: wanted)
        continuation.yield(current)
        continuation.onTermination = { _ in Task { await self.removeObserver(id) } }
        return stream
    }

    private struct StatusObserver {
        let continuation: AsyncStream<EngineStatus>.Continuation
        let wanted: @Sendable (EngineStatus, EngineStatus) -> Bool
    }

    private func removeObserver(_ id: UUID) { observers[id] = nil }

    private func publish(_ change: (inout EngineStatus) -> Void) {
        var next = current
        change(&next)
        next.clockOffsetMilliseconds = api.clockOffsetMilliseconds
        next.link = api.link.quality
        guard next != current else { return }
        let previous = current
        current = next
        for observer in observers.values where observer.wanted(previous, next) { observer.continuation.yield(next) }
    }

    /// What the connectivity probe found, for the status: offline while no run is going on, and back to idle when
    /// the API is reachable again (the run that follows shows in its own phases).
    public func connectivityChanged(online: Bool) {
        publish { status in
            switch (online, status.phase) {
            case (false, .idle), (false, .completed), (false, .error): status.phase = .offline
            case (true, .offline): status.phase = .idle
            default: break
            }
        }
    }

    /// Re-reads counts from the store: the outbox and conflicts, the collections' sync state, and the records of
    /// `recounting` (every collection by default; counting a large table takes time proportional to its size, so a
    /// run recounts only the collections whose size it may have changed).
    public func refreshCounts(recounting: Set<SyncCollection> = Set(SyncCollection.allCases)) {
        do {
            let (updated, counts) = try Self.counts(store, into: current, recounting: recounting)
            let newer = counts.generation >= countsGeneration
            if newer { countsGeneration = counts.generation }
            publish { status in
                status = updated
                if newer { counts.apply(to: &status) }
            }
        } catch {
            logger.error("reading status counts failed", metadata: ["error": "\(error)"])
        }
    }

    /// Shows outbox and conflict counts read elsewhere (a group commit's transaction), unless the status already
    /// shows newer ones.
    func show(_ counts: StatusCounts) {
        guard counts.generation >= countsGeneration else { return }
        countsGeneration = counts.generation
        publish { counts.apply(to: &$0) }
    }

    /// `status` with the collections' sync state and record counts read again, and the outbox and conflict counts
    /// of the same transaction (not applied: the caller shows them if they are newer than the status's).
    private static func counts(
        _ store: ReplicaStore, into status: EngineStatus,
        recounting: Set<SyncCollection> = Set(SyncCollection.allCases)
    ) throws -> (EngineStatus, StatusCounts) {
        try store.read { db in
            var status = status
            let counts = try StatusCounts.read(db)
            let previous = Dictionary(status.collections.map { ($0.collection, $0.records) }) { first, _ in first }
            status.collections = try SyncCollection.pullOrder.map { collection in
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM sync_metadata WHERE collection = ?", arguments: [collection.name])
                let records =
                    if let known = previous[collection], !recounting.contains(collection) {
                        known
                    } else {
                        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(collection.name)") ?? 0
                    }
                return EngineStatus.CollectionStatus(
                    collection: collection,
                    state: (row?["state"] as String?).flatMap(SyncMetadata.State.init(rawValue:)) ?? .initial,
                    hasCursor: (row?["cursor"] as String?) != nil,
                    lastSyncedAt: row?["last_synced_at"], lastSuccessAt: row?["last_success_at"],
                    lastError: row?["last_error"],
                    records: records)
            }
            return (status, counts)
        }
    }
}
