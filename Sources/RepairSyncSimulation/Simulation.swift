internal import Foundation
internal import GRDB
internal import Logging
internal import RepairSyncEngine
internal import RepairSyncModels
internal import RepairSyncProcesses
internal import RepairSyncStore
internal import Synchronization

/// One seeded run of the real engine (`SyncEngine` over a real SQLite file) against `SimServer`, under a virtual
/// clock. The engine runs as one sequence of steps (one request at a time, no page fetched ahead), and every request
/// waits in `SimNetwork` until the seed decides its fate; between any two requests the seed may edit locally, let
/// another program write the replica, edit, delete, re-create or rewind records on the server, start more runs,
/// move the clock, or crash the engine and open it again on the same file. Invariants are checked whenever no run is
/// in progress and at the end, after the faults stop and one quiet sync.
public final class Simulation {
    public let seed: UInt64
    let settings: SimSettings
    /// Draws the operations (used only while drawing, so a list replays the same without it).
    private var generator: SplitMix64
    /// What executing an operation needs at random (message ids, cursors' nonces, how long a fault lasts): the same
    /// for a seed whether its operations are drawn or replayed.
    private var execution: SplitMix64
    private var server: SimServer
    let clock: SimClock
    private var network: SimNetwork
    private let directory: String
    private var store: ReplicaStore
    private var engine: SyncEngine
    private let wakeups: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    private var wakeIterator: AsyncStream<Void>.Iterator
    /// Engine calls started and not yet returned.
    private let outstanding = CallCounter()
    private let runs = RunLog()
    private let requests = RequestLog()

    private var step = 0
    private var ledger: [LedgerEntry] = []
    private var externalWrites:
        [(collection: SyncCollection, id: String, field: String, value: String?, step: Int, auditMark: Int64)] = []
    /// Rows another program inserted, in order (for `queueInserted`).
    private var inserted: [(collection: SyncCollection, id: String, step: Int, auditMark: Int64)] = []
    private var lastMessage: (ticket: String, content: String, id: String)?
    /// The record of the last write the network carried (`localUpdateLastWritten`), and the fields its body set.
    private var lastWritten: (SyncCollection, String)?
    private var lastWrittenFields: [String] = []
    /// Records ("collection|id") edited while a PATCH of theirs was waiting on the network (`localUpdateInFlight`):
    /// drawn, not executed — only `draw` reads it, so a replay of an operation list does not depend on it.
    private var editedInFlight: Set<String> = []
    /// Audit-log entries already checked for a cause (`checkConflictsHaveACause`).
    private var checkedConflicts: Set<Int64> = []
    /// Records ("collection|id") whose PATCH the server acknowledged without applying (`notApplied`): the only cause
    /// of a `server_overrode` entry this server can give.
    private var acknowledgedNotApplied: Set<String> = []
    private var lastWriteInDoubt = false
    private var retryAfterUntil: Int64?
    /// The end of the latest wait a server asked for (server clock), to catch a client that waits far longer.
    private var askedToWaitUntil: Int64 = 0
    /// Feed faults that last: collection → further requests answered the same way.
    private var stickyFeed: [String: (delivery: SimOperation.Delivery, remaining: Int, burst: Bool)] = [:]
    /// The last step at which someone other than this workstation wrote a field ("collection|id|field") or a whole
    /// record ("collection|id": deleted, created again, put back); and of the last whole-server restore.
    private var otherWrites: [String: Int] = [:]
    private var lastRestore = 0
    /// The last step at which another program wrote a field of the replica ("collection|id|field").
    private var externalSteps: [String: Int] = [:]
    private var faultsOn = true
    public private(set) var trace: [String] = []
    public private(set) var violations: [String] = []
    public private(set) var operations: [SimOperation] = []
    public private(set) var coverage = SimCoverage()
    private let tracing: Bool
    private var keys: [String: Int] = [:]

    struct LedgerEntry {
        var collection: SyncCollection
        var id: String
        /// nil for a new record (a message, or a client, an order or a device created here).
        var field: String?
        var value: String?
        var step: Int
        /// The highest audit-log id when the edit was made: only later entries can account for it.
        var auditMark: Int64
        var settled = false
    }

    /// Everything about the run that the seed decides before the first operation (kept when a list is shrunk).
    struct SimSettings {
        var steps: Int
        var faultRate: Double
        var crashes: Bool
        /// Some crashes are a child process's SIGKILL (one seed in four that has crashes).
        var processCrashes: Bool
        var policies: [SyncCollection: ConflictPolicy]
        var pageSize: Int
        var skewMilliseconds: Int64
        var orders: Int
        /// The push classes: the defaults for half the seeds, drawn per subject for the others.
        var priorities: [PushPriorityRule] = PushPriorityRule.defaults
        /// Attempts before a change is dead: 2 to 4, so that dead changes (and their retries and discards, and edits
        /// made meanwhile) are common.
        var maxAttempts = 4
    }

    init(seed: UInt64, tracing: Bool) throws {
        self.seed = seed
        self.tracing = tracing
        var setup = SplitMix64(seed: seed ^ 0x5EED_5E77_1465)
        let policies = ConflictPolicy.allCases
        var settings = SimSettings(
            steps: 40 + Int(setup.next() % 100), faultRate: [0.0, 0.15, 0.3, 0.5][Int(setup.next() % 4)],
            crashes: setup.next() % 3 != 0, processCrashes: setup.next() % 4 == 0,
            policies: [
                .orders: policies[Int(setup.next() % 5)], .devices: policies[Int(setup.next() % 5)],
                .clients: .serverWins, .tickets: .serverWins,
            ],
            pageSize: 2 + Int(setup.next() % 5),
            skewMilliseconds: [0, 0, 3_600_000, -3_600_000, 90_000][Int(setup.next() % 5)],
            orders: 3 + Int(setup.next() % 4))
        generator = SplitMix64(seed: seed)
        execution = SplitMix64(seed: seed ^ 0xE8EC_0710)
        for collection in [SyncCollection.orders, .devices] {
            coverage.policies["\(collection.name): \(settings.policies[collection]!.rawValue)", default: 0] += 1
        }
        let start = Timestamp(millisecondsSince1970: 1_795_000_000_000)
        clock = SimClock(start: start)
        server = SimServer(orders: settings.orders, random: &setup, now: start)
        // Drawn after everything else the setup draws, so that adding them changed no earlier seed's server.
        if setup.next() % 2 == 0 {
            settings.priorities = settings.priorities.map { rule in
                var rule = rule
                rule.priority = PushPriority.allCases[Int(setup.next() % 3)]
                return rule
            }
        }
        settings.maxAttempts = [2, 3, 4, 4][Int(setup.next() % 4)]
        self.settings = settings
        server.nowMilliseconds = start.millisecondsSince1970
        server.skewMilliseconds = settings.skewMilliseconds
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        directory = (base as NSString).appendingPathComponent("repairsync-sim-\(seed)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        wakeups = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
        wakeIterator = wakeups.stream.makeAsyncIterator()
        network = SimNetwork(wakeups: wakeups.continuation, log: requests)
        store = try ReplicaStore.open(at: directory + "/replica.sqlite")
        engine = try Self.makeEngine(
            store: store, network: network, clock: clock, settings: settings, seed: seed, runs: runs)
    }

    deinit {
        heartbeat?.cancel()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Wakes the simulator twice a second, so that a stalled engine is noticed (see `settle`).
    private var heartbeat: Task<Void, Never>?

    static func makeEngine(
        store: ReplicaStore, network: SimNetwork, clock: SimClock, settings: SimSettings, seed: UInt64, runs: RunLog
    ) throws -> SyncEngine {
        let jitter = Mutex(SplitMix64(seed: seed ^ 0x0717_7E12))
        let configuration = EngineConfiguration(
            pageSize: settings.pageSize, policies: settings.policies,
            retry: RetryPolicy(base: .seconds(1), cap: .seconds(60), maxAttempts: settings.maxAttempts),
            completedHold: .zero,
            maxRebasesPerRun: 3, dashboardPeriods: [], pushConcurrency: 1, pullAhead: false, maxStalledPages: 3,
            maxPagesPerRun: 400, maxVerificationsPerPage: 4,
            random: { jitter.withLock { $0.unit() } }, pushPriorities: settings.priorities)
        let api = APIClient(
            configuration: .init(baseURL: "http://sim.invalid", token: SimServer.token), clock: clock,
            transport: network)
        return try SyncEngine(
            store: store, api: api, configuration: configuration, clock: clock,
            logger: Logger(label: "sim", factory: { _ in SwiftLogNoOpLogHandler() }),
            events: EngineEvents { event in
                // Read on the engine's executor as the run ends: the simulator makes no local change meanwhile (it
                // waits in `settle` while a run goes on), so what waits now is what the report had to account for.
                if case .runFinished(let report) = event {
                    runs.finished(report, requests: network.requestCount, waiting: SimOutbox.waiting(store))
                }
            })
    }

    // MARK: Running

    /// Runs the seed's own operations, or `script` (a list being shrunk or replayed), then the quiet end.
    func run(script: [SimOperation]?) async -> SimulationResult {
        let wakeups = wakeups.continuation
        heartbeat = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                wakeups.yield()
            }
        }
        if let script {
            for operation in script {
                await perform(operation)
                if !violations.isEmpty { break }
            }
        } else {
            for _ in 0..<settings.steps {
                let operation = await draw()
                await perform(operation)
                if !violations.isEmpty { break }
            }
        }
        if violations.isEmpty { await quietEnd() }
        await shutDown()
        return SimulationResult(
            seed: seed, violations: violations, operations: operations, trace: trace, coverage: coverage)
    }

    private func perform(_ operation: SimOperation) async {
        step += 1
        server.step = step
        if step % 15 == 0 { server.takeBackup() }
        operations.append(operation)
        coverage.count(operation)
        note("\(step). \(operation)")
        await execute(operation)
        settleHeldEdits()
        guard await settle() else { return }
        // A feed stuck for good answers at once: a client that does not notice loops for as long as the server lets
        // it (bounded here only so that a broken engine still ends the seed).
        var burst = 0
        while faultsOn, burst < 5_000, let waiting = network.waiting, answersAtOnce(waiting.request) {
            deliver(.normal)
            burst += 1
            guard await settle() else { return }
        }
        if outstanding.value == 0 { await checkIdle() }
        checkRuns()
    }

    /// Whether `request` asks a feed that is stuck for good (its answers come without a delivery drawn by the seed).
    private func answersAtOnce(_ request: TransportRequest) -> Bool {
        guard request.method == "GET", request.path.contains("/changes") else { return false }
        let feed = request.path.split(separator: "/").dropFirst(2).first.map(String.init) ?? ""
        guard let sticky = stickyFeed[feed], sticky.burst, sticky.remaining > 0 else { return false }
        return SimServer.split(request.path).1["cursor"].map { server.position($0) != nil } ?? true
    }

    private func note(_ line: @autoclosure () -> String) {
        if tracing { trace.append(line()) }
    }

    private func fail(_ message: String) {
        violations.append(message)
        note("VIOLATION: \(message)")
    }

    /// Waits until the engine is blocked on a request or every call has returned. False (and a violation) when it
    /// neither asks nor finishes within 30 seconds of real time: a stalled engine (a step takes milliseconds; the
    /// margin is for a machine running the whole test suite beside the simulator).
    private func settle() async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while network.waitingCount == 0, outstanding.value > 0, clock.sleeping == 0 {
            guard ContinuousClock.now < deadline else {
                fail("the engine neither sent a request nor finished within 30 s (a stalled run)")
                return false
            }
            _ = await wakeIterator.next()
        }
        return true
    }

    private func call(_ body: @escaping @Sendable (SyncEngine) async -> Void) {
        outstanding.add(1)
        let engine = engine
        let wakeups = wakeups.continuation
        let counter = outstanding
        Task {
            await body(engine)
            counter.add(-1)
            wakeups.yield()
        }
    }

    // MARK: Operations

    private func execute(_ operation: SimOperation) async {
        switch operation {
        case .localUpdate(let devices, let record, let field, let value):
            await localUpdate(devices ? .devices : .orders, record, field, value)
        case .localUpdateLastWritten(let field, let value):
            guard let (collection, id) = lastWritten else { return note("   (nothing written yet)") }
            await localUpdate(collection, id: id, field, value)
        case .localUpdateInFlight(let field, let value):
            guard let (collection, id, fields) = patchInFlight() else { return note("   (no edit in flight)") }
            let editable = SimServer.editable[collection]!
            guard let index = editable.firstIndex(of: fields[field % fields.count]) else {
                return note("   (no such field)")
            }
            editedInFlight.insert("\(collection.name)|\(id)")
            await localUpdate(collection, id: id, index, value)
        case .localMessage(let ticket, let content, let sameId):
            await localMessage(ticket, content, sameId)
        case .localCreate(let kind, let parent, let devices):
            await localCreate(kind, parent, devices)
        case .toolInsert(let kind, let parent):
            toolInsert(kind, parent)
        case .queueInserted(let index):
            await queueInserted(index)
        case .externalWrite(let devices, let record, let field, let value):
            externalWrite(devices ? .devices : .orders, record, field, value)
        case .queueExternal(let devices, let record):
            await queueExternal(devices ? .devices : .orders, record)
        case .retryDead(let index):
            guard let entry = deadEntries().element(index) else { return note("   (no dead change)") }
            do { try await engine.retryDead(seq: entry.seq) } catch { note("   refused: \(error)") }
        case .discardDead(let index):
            guard let entry = deadEntries().element(index) else { return note("   (no dead change)") }
            do { try await engine.discard(seq: entry.seq) } catch { note("   refused: \(error)") }
        case .decideConflict(let index, let keepLocal):
            let open = (try? engine.conflicts(openOnly: true)) ?? []
            guard let conflict = open.sorted(by: { $0.id < $1.id }).element(index) else {
                return note("   (none open)")
            }
            do { try await engine.resolveConflict(id: conflict.id, keepLocal ? .keepLocal : .keepRemote) } catch {
                note("   refused: \(error)")
            }
        case .serverEdit(let collection, let record, let field, let value):
            serverEdit(SyncCollection.pullOrder[collection % 4], record, field, value)
        case .serverDelete(let collection, let record):
            let collection = SyncCollection.pullOrder[collection % 5]
            guard let id = server.ids(collection).element(record) else { return }
            note("   deletes \(collection.name) \(id)")
            server.delete(collection, id)
            otherWrites["\(collection.name)|\(id)"] = step
        case .serverRecreate(let collection, let record):
            let collection = SyncCollection.pullOrder[collection % 4]
            guard let id = server.ids(collection).element(record), var body = server.record(collection, id) else {
                return
            }
            note("   deletes and creates again \(collection.name) \(id)")
            otherWrites["\(collection.name)|\(id)"] = step
            server.delete(collection, id)
            body["version"] = .int(1)
            body["created_at"] = .string(server.serverNow.rfc3339)
            body["updated_at"] = .string(server.serverNow.rfc3339)
            server.insert(collection, body)
        case .serverRewind(let collection, let record, let inFeed):
            let collection = SyncCollection.pullOrder[collection % 4]
            guard let id = server.ids(collection).element(record),
                let history = server.records[collection]?[id]?.history, let older = history.element(record)
            else { return note("   (no history)") }
            note(
                "   \(collection.name) \(id) back to version \(older["version"]?.int ?? 0)\(inFeed ? "" : ", unannounced")"
            )
            server.insert(collection, older, keepPlace: !inFeed)
            otherWrites["\(collection.name)|\(id)"] = step
        case .serverCreateMessage(let ticket):
            guard let ticketId = server.ids(.tickets).element(ticket) else { return }
            let stamp = server.serverNow.rfc3339
            server.insert(
                .ticketMessages,
                SimServer.message(id: "srv_\(step)", ticket: ticketId, content: "from the bench", stamp: stamp))
            _ = server.write(.tickets, ticketId) { $0["message_count"] = .int(($0["message_count"]?.int ?? 0) + 1) }
        case .expireCursors:
            server.epoch += 1
        case .serverRestore(let index):
            guard let backup = server.backups.element(index) else { return note("   (no backup)") }
            note("   back to feed position \(backup.seq)")
            server.restore(backup)
            lastRestore = step
        case .startSync(let kind):
            switch kind {
            case .full: call { _ = await $0.sync(Set(SyncCollection.allCases), dashboard: false) }
            case .pushOnly: call { _ = await $0.sync([]) }
            case .partial(let mask):
                call { _ = await $0.sync(Self.collections(mask)) }
            case .resync(let mask):
                call { _ = await $0.resync(Self.collections(mask)) }
            }
        case .deliver(let delivery):
            deliver(delivery)
        case .crash(let afterApply):
            await crash(afterApply: afterApply)
        case .processCrash(let event, let count):
            await processCrash(event: SimOperation.killEvents[event % SimOperation.killEvents.count], count: count)
        case .advance(let milliseconds):
            advance(milliseconds)
        case .jumpWall(let milliseconds):
            clock.jumpWall(by: milliseconds)
        }
    }

    /// The collections a bit mask over `SyncCollection.pullOrder` names.
    static func collections(_ mask: Int) -> Set<SyncCollection> {
        Set(SyncCollection.pullOrder.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
    }

    private func advance(_ milliseconds: Int64) {
        clock.advance(by: .milliseconds(milliseconds))
        server.nowMilliseconds += milliseconds
    }

    private func auditMark() -> Int64 {
        (try? store.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM conflicts") ?? 0 }) ?? 0
    }

    private func replicaIds(_ collection: SyncCollection) -> [String] {
        (try? store.read { db in try String.fetchAll(db, sql: "SELECT id FROM \(collection.name) ORDER BY id") }) ?? []
    }

    private func deadEntries() -> [OutboxEntry] {
        ((try? engine.outboxEntries()) ?? []).filter { $0.state == .dead }
    }

    static func value(_ field: String, _ collection: SyncCollection, _ n: Int) -> String? {
        if field == "status" {
            let statuses = collection == .orders ? SimServer.orderStatuses : SimServer.deviceStatuses
            return statuses[n % statuses.count]
        }
        return n % 7 == 0 ? nil : "v\(n % 5)"
    }

    private func localUpdate(_ collection: SyncCollection, _ record: Int, _ field: Int, _ value: Int) async {
        guard let id = replicaIds(collection).element(record) else { return note("   (no record)") }
        await localUpdate(collection, id: id, field, value)
    }

    private func localUpdate(_ collection: SyncCollection, id: String, _ field: Int, _ value: Int) async {
        let fields = SimServer.editable[collection]!
        let name = fields[field % fields.count]
        let text = Self.value(name, collection, value)
        let unchanged = changesNothing(collection, id, name, text)
        do {
            try await engine.update(collection, id: id, fields: [name: text])
            // A shop tool's unqueued write of this field is overwritten in the row before anyone acknowledged it.
            externalWrites.removeAll { $0.collection == collection && $0.id == id && $0.field == name }
            if unchanged {
                note("   \(collection.name) \(id).\(name) = \(text ?? "null") (its base's value: changes nothing)")
                return
            }
            ledger.append(
                LedgerEntry(
                    collection: collection, id: id, field: name, value: text, step: step, auditMark: auditMark()))
            note("   \(collection.name) \(id).\(name) = \(text ?? "null")")
        } catch {
            note("   refused: \(error)")
        }
    }

    /// An edit that sets a field to its base's value (the server's last copy), with no change of ours to the field
    /// anywhere — none queued, dead or held, none in doubt, no other program's write in the row — changes nothing:
    /// a three-way merge rightly lets another user's later edit of the field stand, without a conflict (seed
    /// 42403). Such an edit is made but not held to reaching the server. Read from `sync_bases` itself: the row
    /// showing the value is not enough (a rule on the row misjudged seeds 301, 702 and 765).
    private func changesNothing(_ collection: SyncCollection, _ id: String, _ field: String, _ value: String?) -> Bool {
        guard let base = SimBase.read(store, collection, id), base.fields[field] == .some(value),
            !base.inDoubt.contains(field)
        else { return false }
        let ours = ((try? engine.outboxEntries()) ?? []).contains {
            $0.collection == collection && $0.recordId == id && $0.fields.keys.contains(field)
        }
        let others = externalWrites.contains { $0.collection == collection && $0.id == id && $0.field == field }
        return !ours && !others
    }

    /// The oldest PATCH waiting on the network: its record and the fields its body carries (sorted).
    private func patchInFlight() -> (SyncCollection, String, [String])? {
        for request in network.waitingRequests where request.method == "PATCH" {
            let parts = request.path.split(separator: "/")
            guard parts.count >= 2, let collection = SyncCollection(rawValue: String(parts[parts.count - 2])),
                SimServer.editable[collection] != nil,
                let body = request.body, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            else { continue }
            let fields = object.keys.filter { SimServer.editable[collection]!.contains($0) }.sorted()
            if !fields.isEmpty { return (collection, String(parts[parts.count - 1]), fields) }
        }
        return nil
    }

    private func uuid() -> String {
        let a = execution.next()
        let b = execution.next()
        let hex = String(format: "%016llx%016llx", a, b)
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-"
            + String(c[20..<32])
    }

    private func localMessage(_ ticket: Int, _ content: Int, _ sameId: Bool) async {
        let (ticketId, text, id): (String, String, String)
        if sameId, let last = lastMessage {
            // A caller retrying after a lost reply (same content), or reusing an id by mistake (other content,
            // which the engine must refuse rather than send).
            (ticketId, text, id) = (last.ticket, content % 2 == 0 ? last.content : "m\(content)", last.id)
        } else {
            guard let chosen = replicaIds(.tickets).element(ticket) else { return note("   (no ticket)") }
            (ticketId, text, id) = (chosen, "m\(content)", uuid())
        }
        do {
            let message = try await engine.createTicketMessage(ticketId: ticketId, content: text, id: id)
            if message.content != text { fail("a message id reused with other content returned the first message") }
            // One entry per message id and content: a reused id with other content that the engine took (the id
            // was gone from the replica) is a message of its own, to reach the server or be visible.
            if !ledger.contains(where: { $0.collection == .ticketMessages && $0.id == id && $0.value == text }) {
                ledger.append(
                    LedgerEntry(
                        collection: .ticketMessages, id: id, field: nil, value: text, step: step, auditMark: auditMark()
                    ))
            }
            if !sameId { lastMessage = (ticketId, text, id) }
            note("   message \(id.prefix(8)) on \(ticketId)")
        } catch {
            note("   refused: \(error)")
        }
    }

    // MARK: Booking in

    /// A new record in the ledger: it must reach the server, or be visible in the outbox, or be in the audit log.
    /// Its editable fields count as edits of their own (the create carries them).
    private func ledgerCreate(
        _ collection: SyncCollection, _ id: String, _ fields: FieldValues, step: Int? = nil, mark: Int64? = nil
    ) {
        let mark = mark ?? auditMark()
        ledger.append(
            LedgerEntry(
                collection: collection, id: id, field: nil, value: nil, step: step ?? self.step, auditMark: mark))
        let editable = SimServer.editable[collection] ?? []
        for field in editable.sorted() where fields[field] != nil {
            ledger.append(
                LedgerEntry(
                    collection: collection, id: id, field: field, value: fields[field] ?? nil, step: step ?? self.step,
                    auditMark: mark))
        }
    }

    private func localCreate(_ kind: Int, _ parent: Int, _ deviceCount: Int) async {
        let n = step
        func orderFields(_ client: String) -> FieldValues {
            var fields: FieldValues = ["client_id": client]
            if n % 3 == 0 { fields["status"] = Self.value("status", .orders, n) }
            if n % 2 == 0 { fields["notes"] = "booked \(n % 5)" }
            if n % 4 == 1 { fields["deposit"] = "\(n % 30).5" }
            return fields
        }
        func device(_ k: Int, order: String? = nil) -> LocalChanges.NewRecord {
            var fields: FieldValues = ["type": k % 2 == 0 ? "phone" : "laptop", "issue": "fault \(n % 7)"]
            if (n + k) % 2 == 0 { fields["price"] = "\(40 + k).99" }
            if (n + k) % 5 == 0 { fields["diagnosis"] = "v\(k % 5)" }
            if let order { fields["order_id"] = order }
            return LocalChanges.NewRecord(id: uuid(), fields: fields)
        }
        do {
            switch kind % 4 {
            case 0:
                let fields: FieldValues = ["email": "new\(n)@example.com", "first_name": "New\(n)"]
                let client = try await engine.createClient(.init(id: uuid(), fields: fields))
                ledgerCreate(.clients, client.id, fields)
                note("   client \(client.id.prefix(8))")
            case 1, 3:
                var clientId: String
                if kind % 4 == 3 {
                    let fields: FieldValues = ["email": "walk-in\(n)@example.com", "last_name": "Walk-in \(n)"]
                    clientId = try await engine.createClient(.init(id: uuid(), fields: fields)).id
                    ledgerCreate(.clients, clientId, fields)
                } else {
                    guard let chosen = replicaIds(.clients).element(parent) else { return note("   (no client)") }
                    clientId = chosen
                }
                let fields = orderFields(clientId)
                let devices = (0..<(deviceCount % 3)).map { device($0) }
                let (order, booked) = try await engine.createOrder(.init(id: uuid(), fields: fields), devices: devices)
                ledgerCreate(.orders, order.id, fields)
                // (The devices come back in the replica's order, not the call's: matched by id.)
                for new in devices where booked.contains(where: { $0.id == new.id }) {
                    ledgerCreate(.devices, new.id!, new.fields)
                }
                if order.orderNumber != nil {
                    fail("an order booked in here shows a number before the server gave one")
                }
                note("   order \(order.id.prefix(8)) for \(clientId.prefix(8)) with \(booked.count) devices")
            default:
                guard let orderId = replicaIds(.orders).element(parent) else { return note("   (no order)") }
                let new = device(0, order: orderId)
                let created = try await engine.createDevice(new)
                ledgerCreate(.devices, created.id, new.fields)
                note("   device \(created.id.prefix(8)) on \(orderId.prefix(8))")
            }
        } catch {
            note("   refused: \(error)")
        }
    }

    /// Another program inserts a row itself (valid: a UUID, a parent in the replica, no order number).
    private func toolInsert(_ kind: Int, _ parent: Int) {
        let id = uuid()
        let stamp = clock.now().rfc3339
        let collection: SyncCollection
        let sql: String
        let arguments: StatementArguments
        switch kind % 3 {
        case 0:
            collection = .clients
            sql = """
                INSERT INTO clients (id, email, first_name, order_count, total_spent, created_at, updated_at, version)
                VALUES (?, ?, ?, 0, '0', ?, ?, 0)
                """
            arguments = [id, "tool\(step)@example.com", "Tool\(step)", stamp, stamp]
        case 1:
            guard let client = replicaIds(.clients).element(parent) else { return note("   (no client)") }
            collection = .orders
            sql = """
                INSERT INTO orders (id, order_number, status, notes, client_id, device_count, created_at, updated_at, version)
                VALUES (?, NULL, 'booked_in', ?, ?, 0, ?, ?, 0)
                """
            arguments = [id, "from the till \(step % 3)", client, stamp, stamp]
        default:
            guard let order = replicaIds(.orders).element(parent) else { return note("   (no order)") }
            collection = .devices
            sql = """
                INSERT INTO devices (id, order_id, type, status, issue, created_at, updated_at, version)
                VALUES (?, ?, 'tablet', 'booked_in', 'no power', ?, ?, 0)
                """
            arguments = [id, order, stamp, stamp]
        }
        do {
            let queue = try DatabaseQueue(path: directory + "/replica.sqlite")
            try queue.write { db in try db.execute(sql: sql, arguments: arguments) }
            try queue.close()
            inserted.append((collection, id, step, auditMark()))
            note("   \(collection.name) \(id.prefix(8)) inserted (not queued)")
        } catch {
            note("   failed: \(error)")
        }
    }

    private func queueInserted(_ index: Int) async {
        guard let chosen = inserted.element(index) else { return note("   (nothing inserted)") }
        let kind: LocalChanges.ChangeKind =
            switch chosen.collection {
            case .clients: .clientCreated
            case .orders: .orderCreated
            default: .deviceCreated
            }
        do {
            let result = try await engine.queueChange(kind, id: chosen.id)
            inserted.removeAll { $0.id == chosen.id }
            // Acknowledged: the program's record must now reach the server (it was made when it was inserted). Its
            // values are the row's, which later edits may have changed: only the record is in the ledger.
            ledgerCreate(chosen.collection, chosen.id, [:], step: chosen.step, mark: chosen.auditMark)
            note("   \(result)")
        } catch {
            note("   refused: \(error)")
        }
    }

    private func externalWrite(_ collection: SyncCollection, _ record: Int, _ field: Int, _ value: Int) {
        guard let id = replicaIds(collection).element(record) else { return note("   (no record)") }
        let fields = SimServer.editable[collection]!
        let name = fields[field % fields.count]
        let text = Self.value(name, collection, value)
        do {
            let queue = try DatabaseQueue(path: directory + "/replica.sqlite")
            let changed = try queue.write { db -> Bool in
                let old = try String?.fetchOne(
                    db, sql: "SELECT \(name) FROM \(collection.name) WHERE id = ?", arguments: [id])
                try db.execute(sql: "UPDATE \(collection.name) SET \(name) = ? WHERE id = ?", arguments: [text, id])
                return old != text
            }
            try queue.close()
            guard changed else { return note("   \(collection.name) \(id).\(name) already \(text ?? "null")") }
            externalWrites.append((collection, id, name, text, step, auditMark()))
            externalSteps["\(collection.name)|\(id)|\(name)"] = step
            // The tool's newer value replaces any earlier acknowledged edit of the field, queued or not.
            for index in ledger.indices
            where ledger[index].collection == collection && ledger[index].id == id && ledger[index].field == name {
                ledger[index].settled = true
            }
            note("   \(collection.name) \(id).\(name) = \(text ?? "null") (not queued)")
        } catch {
            note("   failed: \(error)")
        }
    }

    private func queueExternal(_ collection: SyncCollection, _ record: Int) async {
        let candidates = externalWrites.filter { $0.collection == collection }
        guard let chosen = candidates.element(record) else { return note("   (nothing written)") }
        let kind: LocalChanges.ChangeKind = collection == .orders ? .orderUpdated : .deviceUpdated
        do {
            let result = try await engine.queueChange(kind, id: chosen.id)
            // Acknowledged: the values the row holds now for the fields that program wrote are the tool's edits.
            let writes = externalWrites.filter { $0.collection == collection && $0.id == chosen.id }
            let fields = Set(writes.map(\.field))
            externalWrites.removeAll { $0.collection == collection && $0.id == chosen.id }
            // Acknowledged: what the tool wrote, field by field (its last value of each), as of when it wrote it.
            for field in fields.sorted() {
                let written = writes.last { $0.field == field }!
                ledger.append(
                    LedgerEntry(
                        collection: collection, id: chosen.id, field: field, value: written.value, step: written.step,
                        auditMark: written.auditMark))
            }
            note("   \(result)")
        } catch {
            note("   refused: \(error)")
        }
    }

    private func serverEdit(_ collection: SyncCollection, _ record: Int, _ field: Int, _ value: Int) {
        guard let id = server.ids(collection).element(record) else { return }
        let fields: [String] =
            switch collection {
            case .orders: ["status", "notes", "total"]
            case .devices: ["status", "diagnosis", "resolution", "price"]
            case .clients: ["notes", "phone"]
            default: ["subject", "status"]
            }
        let name = fields[field % fields.count]
        let text: String? =
            switch (collection, name) {
            case (.orders, "status"), (.devices, "status"): Self.value("status", collection, value)
            case (.tickets, "status"): ["open", "pending", "closed"][value % 3]
            case (_, "total"), (_, "price"): "\(100 + value).5"
            case (.tickets, "subject"): "subject \(value)"
            default: Self.value(name, collection, value)
            }
        note("   \(collection.name) \(id).\(name) = \(text ?? "null") on the server")
        otherWrites["\(collection.name)|\(id)|\(name)"] = step
        _ = server.write(collection, id) { $0[name] = text.map { .string($0) } ?? .null }
    }

    // MARK: Deliveries

    private func key(_ request: TransportRequest) -> String {
        guard let key = request.header("Idempotency-Key") else { return "" }
        if keys[key] == nil { keys[key] = keys.count + 1 }
        return " key K\(keys[key]!)"
    }

    private func deliver(_ delivery: SimOperation.Delivery) {
        guard let pending = network.take() else { return note("   (nothing waiting)") }
        let request = pending.request
        coverage.count(delivery)
        if request.method == "PATCH" {
            let parts = request.path.split(separator: "/")
            if parts.count >= 2, let collection = SyncCollection(rawValue: String(parts[parts.count - 2])) {
                lastWritten = (collection, String(parts[parts.count - 1]))
                let body = request.body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
                lastWrittenFields = body.keys.filter { SimServer.editable[collection]?.contains($0) == true }.sorted()
                // A write in doubt (the client cannot tell whether the server applied it) or refused: the edits
                // that follow meet an entry that is unsettled or dead.
                lastWriteInDoubt = [.lostRequest, .lostResponse, .truncated, .unreachable, .refused].contains(delivery)
            }
        }
        note("   \(request.method) \(request.path)\(key(request))")
        if let until = retryAfterUntil, server.serverNow.millisecondsSince1970 < until {
            fail("a request was sent before the server's Retry-After was up: \(request.method) \(request.path)")
        }
        retryAfterUntil = nil
        let isFeed = request.method == "GET" && request.path.contains("/changes")
        let feedName = isFeed ? request.path.split(separator: "/").dropFirst(2).first.map(String.init) ?? "" : ""
        var delivery = delivery
        let knownCursor = SimServer.split(request.path).1["cursor"].map { server.position($0) != nil } ?? true
        if isFeed, knownCursor, case .normal = delivery, faultsOn, let sticky = stickyFeed[feedName],
            sticky.remaining > 0
        {
            delivery = sticky.delivery
            stickyFeed[feedName] = (sticky.delivery, sticky.remaining - 1, sticky.burst)
            note("   (the feed fault lasts)")
        } else if isFeed, [.stuckFeed, .emptyFeed, .rotatingFeed].contains(delivery) {
            // Mostly a few pages; one time in four a server stuck for good (until the faults stop), which answers
            // at once, page after page, without waiting for the seed (see `perform`).
            let stuckForGood = execution.next() % 4 == 0
            stickyFeed[feedName] = (delivery, stuckForGood ? 100_000 : 2 + Int(execution.next() % 6), stuckForGood)
        }
        let response: Result<TransportResponse, TransportFailure>
        switch delivery {
        case .normal: response = .success(server.handle(request))
        case .unreachable: response = .failure(.unreachable("sim: no route to the API"))
        case .lostRequest: response = .failure(.interrupted("sim: connection reset before the server read it"))
        case .lostResponse:
            // A 412 tells the client of a silent rewind only if it arrives.
            let unannounced = server.unannounced
            _ = server.handle(request)
            server.unannounced = unannounced
            response = .failure(.interrupted("sim: the response was lost"))
        case .serverError(let status):
            response = .success(server.error(status, status == 503 ? "unavailable" : "internal", "sim"))
        case .rateLimited(let seconds, let asDate):
            var reply = server.error(429, "rate_limited", "slow down")
            let until = server.serverNow.adding(milliseconds: Int64(seconds) * 1000)
            reply.headers.append(("Retry-After", asDate ? until.httpDate : "\(seconds)"))
            retryAfterUntil =
                asDate ? (until.millisecondsSince1970 / 1000) * 1000 - 1000 : until.millisecondsSince1970 - 1000
            askedToWaitUntil = max(askedToWaitUntil, until.millisecondsSince1970)
            response = .success(reply)
        case .unavailableRetryAfter(let seconds):
            var reply = server.error(503, "unavailable", "maintenance")
            reply.headers.append(("Retry-After", "\(seconds)"))
            retryAfterUntil = server.serverNow.millisecondsSince1970 + Int64(seconds) * 1000 - 1000
            askedToWaitUntil = max(askedToWaitUntil, server.serverNow.millisecondsSince1970 + Int64(seconds) * 1000)
            response = .success(reply)
        case .unauthorized:
            var reply = server.error(401, "unauthorized", "token refused")
            reply.headers.append(("WWW-Authenticate", "Bearer"))
            response = .success(reply)
        case .proxyPage(let status):
            response = .success(
                TransportResponse(
                    status: status, headers: [("Content-Type", "text/html")],
                    body: Data("<html><body>proxy error \(status)</body></html>".utf8)))
        case .refused where request.method == "PATCH" || request.method == "POST":
            response = .success(server.refuse(request))
        case .refused:
            response = .success(server.handle(request))
        case .notApplied:
            server.appliesPatchValues = false
            response = .success(server.handle(request))
            server.appliesPatchValues = true
            if request.method == "PATCH" {
                acknowledgedNotApplied.insert(request.path.split(separator: "/").suffix(2).joined(separator: "|"))
            }
        case .truncated:
            var reply = server.handle(request)
            if (200..<300).contains(reply.status) { reply.body = reply.body.prefix(reply.body.count / 2) }
            response = .success(reply)
        case .stuckFeed, .emptyFeed, .rotatingFeed, .stalePage, .staleCopies, .malformedRecord, .cursorExpired:
            // A feed fault stands in for a real page: a cursor the server no longer knows still answers 410.
            let cursor = SimServer.split(request.path).1["cursor"]
            let known = cursor.map { server.position($0) != nil } ?? true
            response = .success(isFeed && known ? feedFault(delivery, request) : server.handle(request))
        }
        switch response {
        case .success(let reply):
            note("   → \(reply.status)\(reply.header("Idempotent-Replayed") != nil ? " (replayed)" : "")")
        case .failure(let failure): note("   → \(failure)")
        }
        pending.reply(response)
    }

    private func feedFault(_ delivery: SimOperation.Delivery, _ request: TransportRequest) -> TransportResponse {
        let (path, query) = SimServer.split(request.path)
        let collection = SyncCollection(rawValue: path.split(separator: "/").map(String.init)[2]) ?? .orders
        let after = query["cursor"].flatMap(server.position) ?? 0
        let limit = query["limit"].flatMap(Int.init) ?? 500
        switch delivery {
        case .stuckFeed:
            var page = server.page(collection, after: after, limit: limit).body
            page["has_more"] = .bool(true)
            page["next_cursor"] = .string(query["cursor"] ?? server.cursor(after: 0))
            return server.json(200, page)
        case .rotatingFeed:
            var page = server.page(collection, after: after, limit: limit).body
            page["has_more"] = .bool(true)
            page["next_cursor"] = .string(server.cursor(after: after, nonce: execution.next() % 1_000_000))
            return server.json(200, page)
        case .emptyFeed:
            return server.json(
                200,
                .object([
                    "data": .array([]), "deleted": .array([]), "has_more": .bool(true),
                    "next_cursor": .string(server.cursor(after: after, nonce: execution.next() % 1_000_000)),
                ]))
        case .stalePage(let back):
            guard let pages = server.served[collection], !pages.isEmpty else { return server.handle(request) }
            return TransportResponse(
                status: 200, headers: [("Date", server.serverNow.httpDate)],
                body: pages[max(0, pages.count - 1 - back % pages.count)])
        case .staleCopies:
            var page = server.page(collection, after: after, limit: limit).body
            guard case .array(let records)? = page["data"] else { return server.handle(request) }
            let held =
                (try? store.read { db in
                    try Row.fetchAll(db, sql: "SELECT id, version FROM \(collection.name)").map {
                        ($0["id"] as String, $0["version"] as Int)
                    }
                }).map { Dictionary($0, uniquingKeysWith: max) } ?? [:]
            var staled = 0
            let copies = records.map { record -> SimJSON in
                guard let id = record["id"]?.string, let local = held[id],
                    let older = server.records[collection]?[id]?.history.last(where: {
                        ($0["version"]?.int ?? .max) < local
                    })
                else { return record }
                staled += 1
                return older
            }
            page["data"] = .array(copies)
            note("   (\(staled) of \(records.count) records as older copies)")
            return server.json(200, page)
        case .malformedRecord:
            let reply = server.handle(request)
            guard reply.status == 200, let text = String(data: reply.body, encoding: .utf8),
                let range = text.range(of: #""version":[0-9]+"#, options: .regularExpression)
            else { return reply }
            var damaged = reply
            damaged.body = Data(text.replacingCharacters(in: range, with: #""version":"x""#).utf8)
            return damaged
        default:
            return server.error(410, "cursor_expired", "the cursor has expired")
        }
    }

    // MARK: Crashes

    /// The process dies: the request in flight is lost (applied first when `afterApply`), nothing more of this
    /// engine reaches the store, and a new engine opens the same file.
    private func crash(afterApply: Bool) async {
        coverage.crashes[afterApply ? "after apply" : network.waitingCount > 0 ? "before apply" : "idle", default: 0] +=
            1
        if afterApply, let pending = network.waiting { _ = server.handle(pending.request) }
        try? store.close()
        // Whatever the dead engine still tries goes nowhere.
        while outstanding.value > 0 {
            guard await settle() else { return }
            if let pending = network.take() { pending.reply(.failure(.interrupted("sim: the process died"))) }
        }
        retryAfterUntil = nil
        // The dead engine's runs end on its closed store: judged here, except for the store's errors.
        checkRuns(engineDied: true)
        await reopen()
    }

    /// A new engine on the same file, as a restarted daemon: the store's integrity first.
    private func reopen() async {
        do {
            store = try ReplicaStore.open(at: directory + "/replica.sqlite")
            let problems = try store.integrityProblems()
            if !problems.isEmpty { fail("integrity_check after a crash: \(problems.joined(separator: "; "))") }
            network = SimNetwork(wakeups: wakeups.continuation, log: requests)
            engine = try Self.makeEngine(
                store: store, network: network, clock: clock, settings: settings, seed: seed &+ UInt64(step), runs: runs
            )
        } catch {
            fail("the store did not open again after a crash: \(error)")
        }
    }

    /// The helper next to this executable (or test bundle); nil when it was not built.
    static let helper: URL? = {
        let candidate = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("repairsync-test-helper")
        return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
    }()

    private func processCrash(event: String, count: Int) async {
        guard outstanding.value == 0 else { return note("   (a run is in progress)") }
        guard let helper = Self.helper else { return note("   (repairsync-test-helper is not built here)") }
        coverage.crashes["SIGKILL at \(event)", default: 0] += 1
        // A new process does not know what the last one was told to wait for.
        retryAfterUntil = nil
        try? store.close()
        do {
            let front = try SimHTTPFront(server: server)
            let child = try ChildProcess(
                [
                    helper.path, "--store", directory + "/replica.sqlite", "--api", "http://127.0.0.1:\(front.port)",
                    "--token", SimServer.token, "--page-size", "\(settings.pageSize)", "--push-concurrency", "1",
                    "--no-pull-ahead", "--kill-on", "\(event):\(count)",
                ],
                environment: ProcessInfo.processInfo.environment, logPath: "/dev/null")
            // Bounded like every wait here: a child that neither reaches its kill point nor ends is a stalled sync.
            guard let status = await child.waitForExit(timeout: 120) else {
                await child.killNow()
                server = front.close()
                fail("the child process's sync neither reached \(event):\(count) nor ended within 120 s")
                return await reopen()
            }
            server = front.close()
            note(
                status == 128 + SIGKILL
                    ? "   killed at \(event):\(count)"
                    : "   the child's sync ended (\(status)) before \(event):\(count)")
        } catch {
            fail("the child process could not run: \(error)")
        }
        await reopen()
    }

    // MARK: Drawing operations

    private func chance(_ p: Double) -> Bool { generator.unit() < p }

    private func small() -> Int { Int(generator.next() % 64) }

    private func draw() async -> SimOperation {
        let waiting = network.waiting
        if let waiting, chance(0.7) {
            return .deliver(drawDelivery(waiting.request))
        }
        if waiting != nil, settings.crashes, chance(0.05) { return .crash(afterApply: chance(0.5)) }
        if let focused = focusedDraw() { return focused }
        let roll = generator.unit()
        switch roll {
        case ..<0.18:
            if waiting != nil, chance(0.25), patchInFlight() != nil {
                return .localUpdateInFlight(field: small(), value: small())
            }
            if let (collection, _) = lastWritten, chance(lastWriteInDoubt ? 0.6 : 0.15) {
                // Mostly a field the last write set: the edit meets that write's entry (in doubt, dead or done).
                let editable = SimServer.editable[collection]!
                let field =
                    lastWrittenFields.isEmpty || chance(0.3)
                    ? small() : editable.firstIndex(of: lastWrittenFields[small() % lastWrittenFields.count]) ?? small()
                return .localUpdateLastWritten(field: field, value: small())
            }
            return .localUpdate(devices: chance(0.4), record: small(), field: small(), value: small())
        case ..<0.23:
            return .localCreate(kind: small(), parent: small(), devices: small())
        case ..<0.25:
            // Half the time under a client created here whose create has not gone (dead, or waiting): the row
            // waits for that create, and goes with it when it is discarded.
            if chance(0.5), let parent = pendingLocalClient() { return .toolInsert(kind: 1, parent: parent) }
            return .toolInsert(kind: small(), parent: small())
        case ..<0.26:
            return .queueInserted(index: small())
        case ..<0.29:
            return .localMessage(ticket: small(), content: small(), sameIdAsLast: chance(0.2))
        case ..<0.32:
            return .externalWrite(devices: chance(0.4), record: small(), field: small(), value: small())
        case ..<0.35:
            return .queueExternal(devices: chance(0.4), record: small())
        case ..<0.47:
            return .serverEdit(collection: small(), record: small(), field: small(), value: small())
        case ..<0.49:
            return .serverDelete(collection: small(), record: small())
        case ..<0.505:
            return .serverRecreate(collection: small(), record: small())
        case ..<0.525:
            return .serverRewind(collection: small(), record: small(), inFeed: chance(0.5))
        case ..<0.54:
            return .serverCreateMessage(ticket: small())
        case ..<0.545:
            return .expireCursors
        case ..<0.55:
            return .serverRestore(backup: small())
        case ..<0.72:
            let kind: SimOperation.SyncKind =
                chance(0.6)
                ? .full
                : chance(0.5)
                    ? .pushOnly
                    // A share of them the admin's `repairctl resync`: pulled again from the beginning, and swept.
                    : chance(0.2)
                        ? .resync(mask: 1 + Int(generator.next() % 31)) : .partial(mask: 1 + Int(generator.next() % 31))
            return .startSync(kind)
        case ..<0.83:
            return .advance(milliseconds: [200, 1500, 5000, 30_000, 90_000][Int(generator.next() % 5)])
        case ..<0.84:
            return .jumpWall(milliseconds: chance(0.5) ? 3_600_000 : -3_600_000)
        case ..<0.87:
            if settings.processCrashes, chance(0.4) {
                return .processCrash(event: small(), count: 1 + Int(generator.next() % 4))
            }
            return settings.crashes ? .crash(afterApply: false) : .advance(milliseconds: 100)
        case ..<0.91:
            return .retryDead(index: small())
        case ..<0.94:
            return .discardDead(index: small())
        default:
            return .decideConflict(index: small(), keepLocal: chance(0.5))
        }
    }

    /// Sequences a uniform draw reaches once in thousands of seeds, drawn on purpose a share of the time: the newest
    /// dead change retried or discarded (after the edits that met it), and a server restore while a collection is
    /// being pulled from the beginning (its marks set).
    private func focusedDraw() -> SimOperation? {
        if chance(0.06) {
            let dead = deadEntries()
            guard let newest = dead.indices.max(by: { dead[$0].seq < dead[$1].seq }) else { return nil }
            return chance(0.6) ? .retryDead(index: newest) : .discardDead(index: newest)
        }
        if chance(0.03), !server.backups.isEmpty,
            (try? store.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM resync_marks)") ?? false })
                == true
        {
            return .serverRestore(backup: small())
        }
        return nil
    }

    /// The index (in `replicaIds(.clients)`) of a client created here whose create is still in the outbox, dead ones
    /// first.
    private func pendingLocalClient() -> Int? {
        let creates = ((try? engine.outboxEntries()) ?? []).filter { $0.collection == .clients && $0.kind == .create }
        guard let pick = creates.first(where: { $0.state == .dead }) ?? creates.first else { return nil }
        return replicaIds(.clients).firstIndex(of: pick.recordId)
    }

    private func drawDelivery(_ request: TransportRequest) -> SimOperation.Delivery {
        let isFeed = request.path.contains("/changes")
        // A PATCH that carries a record edited while it waited: refused a third of the time, so that the dead change
        // meets the later one (which must win, whatever is retried).
        if request.method == "PATCH", faultsOn, chance(0.35),
            editedInFlight.contains(request.path.split(separator: "/").suffix(2).joined(separator: "|"))
        {
            return .refused
        }
        guard chance(settings.faultRate) else { return .normal }
        var kinds: [SimOperation.Delivery] = [
            .unreachable, .lostRequest, .lostResponse, .lostResponse, .serverError(500), .serverError(503),
            .rateLimited(seconds: 1 + Int(generator.next() % 30), asDate: chance(0.5)),
            .unavailableRetryAfter(seconds: 1 + Int(generator.next() % 30)), .unauthorized,
            .proxyPage([401, 403, 404][Int(generator.next() % 3)]), .truncated,
        ]
        if !isFeed { kinds += [.refused, .refused, .notApplied] }
        if isFeed {
            kinds += [
                .stuckFeed, .emptyFeed, .rotatingFeed, .stalePage(back: small()), .staleCopies, .malformedRecord,
                .cursorExpired,
                .cursorExpired,
            ]
        }
        return kinds[Int(generator.next() % UInt64(kinds.count))]
    }

    // MARK: The end

    /// Faults stop: every run in progress ends with normal answers, the clock moves past every retry and wait, and
    /// one quiet full sync runs; then the replica must equal the server with the pending changes on top.
    private func quietEnd() async {
        note("-- faults stop")
        faultsOn = false
        var deliveries = 0
        while outstanding.value > 0 {
            guard await settle() else { return }
            if network.waitingCount > 0 {
                deliver(.normal)
                deliveries += 1
                guard deliveries < 5000 else { return fail("runs did not end after 5,000 fault-free answers") }
            } else if clock.sleeping > 0 {
                advance(1000)
            }
        }
        checkRuns()
        // Past every retry time and wait: two hours beyond the latest the wall clock showed (a retry time written
        // before the clock was set back is that far ahead of it; the engine rightly waits for it when it is within
        // the retry cap, and takes it as due when it is further).
        advance(2 * 3_600_000 + clock.wallSetBack)
        note("-- one quiet sync")
        call { _ = await $0.sync(Set(SyncCollection.allCases), dashboard: false) }
        while outstanding.value > 0 {
            guard await settle() else { return }
            if network.waitingCount > 0 {
                deliver(.normal)
                deliveries += 1
                guard deliveries < 10_000 else { return fail("the quiet sync did not end") }
            }
        }
        checkRuns()
        await checkIdle()
        checkConvergence()
        checkListIndexes()
        checkLastEdits()
        checkCreatesSettled()
        // A fixpoint: another quiet run finds nothing left to send (no write replayed or re-sent without end).
        let before = requests.count
        call { _ = await $0.sync(Set(SyncCollection.allCases), dashboard: false) }
        while outstanding.value > 0 {
            guard await settle() else { return }
            if network.waitingCount > 0 { deliver(.normal) }
        }
        let writes = requests.slice(before..<requests.count).filter { $0.hasPrefix("PATCH") || $0.hasPrefix("POST") }
        if !writes.isEmpty {
            fail("after the quiet sync, the next run still sent \(writes.count) writes: \(writes.prefix(3))")
        }
        checkRuns()
    }

    /// The strongest form of "no lost update": when this workstation's last edit of a field reached the server and
    /// nobody changed that field since — no other user, no other program, no policy decision or deletion in the
    /// audit log, no change still in the outbox — the server ends with that value. (An older change sent after a
    /// newer one would break it.)
    private func checkLastEdits() {
        guard let entries = try? engine.outboxEntries(), let audit = try? engine.conflicts(limit: 100_000) else {
            return
        }
        var last: [String: LedgerEntry] = [:]
        for edit in ledger where edit.field != nil {
            let key = "\(edit.collection.name)|\(edit.id)|\(edit.field!)"
            // The last edit made, not the last acknowledged (a shop tool's edit is acknowledged after it was made).
            if let known = last[key], known.step > edit.step { continue }
            last[key] = edit
        }
        for (key, edit) in last.sorted(by: { $0.key < $1.key }) {
            let field = edit.field!
            let record = "\(edit.collection.name)|\(edit.id)"
            guard let current = server.record(edit.collection, edit.id),
                server.held(edit.collection, edit.id, field, edit.value, since: edit.step),
                (otherWrites[key] ?? -1) < edit.step, (otherWrites[record] ?? -1) < edit.step, lastRestore < edit.step,
                (externalSteps[key] ?? -1) <= edit.step,
                !audit.contains(where: {
                    $0.collection == edit.collection && $0.recordId == edit.id && $0.id > edit.auditMark
                }),
                !entries.contains(where: { $0.collection == edit.collection && $0.recordId == edit.id })
            else { continue }
            let expected: SimJSON = edit.value.map { .string($0) } ?? .null
            if current[field] != expected {
                fail(
                    "the last local edit \(key) = \(edit.value ?? "null") (step \(edit.step)) reached the server and was overwritten with \(current[field]?.text ?? "nothing") by an older change"
                )
            }
        }
    }

    /// After a quiet full sync, a record created here is on the server, or its create is still in the outbox as
    /// dead with the reason (refused, or blocked by a dead parent's create) — never waiting without one.
    private func checkCreatesSettled() {
        guard let entries = try? engine.outboxEntries() else { return fail("the outbox cannot be read") }
        for entry in entries where entry.kind == .create && entry.collection != .ticketMessages {
            if entry.state != .dead || (entry.lastError ?? "").isEmpty {
                fail(
                    "after the quiet sync, the create of \(entry.collection.name) \(entry.recordId) is \(entry.state.rawValue) without a reason"
                )
            }
        }
    }

    private func shutDown() async {
        while outstanding.value > 0 {
            guard await settle() else { break }
            if let pending = network.take() { pending.reply(.failure(.unreachable("sim: shutting down"))) }
        }
        try? store.close()
    }

    // MARK: Invariants

    /// At every point where no run is in progress.
    private func checkIdle() async {
        // 2 and 3: no write applied twice, no key reused for another request, no message id clash.
        for (key, count) in server.applications where count > 1 {
            fail("the server applied key \(key) \(count) times")
        }
        if server.keyReuses > 0 {
            fail("the client reused an idempotency key for another request (\(server.keyReuses)×)")
        }
        if server.duplicateIds > 0 { fail("the client sent a record id the server holds with other content") }
        if server.orphanCreates > 0 {
            fail("a create was sent before its parent was on the server (\(server.orphanCreates)×)")
        }
        for (key, count) in server.createdIds where count > 1 { fail("the server created \(key) \(count) times") }
        // 6: the status counts are the outbox's.
        let status = await engine.status
        if let counts = try? await store.read({ db in
            try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM outbox GROUP BY state").map {
                ($0["state"] as String, $0["n"] as Int)
            }
        }) {
            let count = { (states: [String]) in counts.filter { states.contains($0.0) }.map(\.1).reduce(0, +) }
            let expected = (count(["pending", "in_flight"]), count(["failed"]), count(["dead"]), count(["held"]))
            if (status.pending, status.failed, status.dead, status.held) != expected {
                fail("status counts \((status.pending, status.failed, status.dead, status.held)) ≠ outbox \(expected)")
            }
        }
        // The status's record counts are the tables' (a run recounts only the collections it may have resized).
        // A row another program inserted counts once the daemon hears of it (its queueChange, or the next run) —
        // or sooner, when anything makes it count the table: either is right until then.
        if let tables = try? await store.read({ db in
            try SyncCollection.pullOrder.map { collection -> ClosedRange<Int> in
                let all = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(collection.name)") ?? 0
                guard [.clients, .orders, .devices].contains(collection) else { return all...all }
                let unheard =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT COUNT(*) FROM \(collection.name) r WHERE r.synced_at IS NULL
                            AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.collection = ? AND o.record_id = r.id)
                            """, arguments: [collection.name]) ?? 0
                return (all - unheard)...all
            }
        }) {
            let shown = SyncCollection.pullOrder.map { collection in
                status.collections.first { $0.collection == collection }?.records ?? -1
            }
            if !zip(shown, tables).allSatisfy({ $1.contains($0) }) {
                fail("status record counts \(shown) ≠ tables \(tables)")
            }
        }
        checkLedger()
        checkConflictsHaveACause()
    }

    /// A conflict needs someone else: an edit logged as decided against a remote change (kept local or remote,
    /// merged, awaiting a decision) on a record nobody but this workstation ever wrote — no other user, no
    /// deletion, re-creation or rewind, no restore of the server — is a phantom: the engine took its own write (one
    /// in doubt, say) for another's, and a policy may have dropped a later local edit for it.
    private func checkConflictsHaveACause() {
        guard let audit = try? engine.conflicts(limit: 100_000), lastRestore == 0 else { return }
        // An override needs a server that did not apply what it acknowledged.
        for entry in audit where entry.outcome == .serverOverrode && !checkedConflicts.contains(entry.id) {
            checkedConflicts.insert(entry.id)
            let record = "\(entry.collection.name)|\(entry.recordId)"
            if !acknowledgedNotApplied.contains(record) {
                fail(
                    "conflict \(entry.id) (server_overrode) on \(record), whose every acknowledged PATCH was applied: "
                        + "fields \(entry.fields), sent \(entry.local), answered \(entry.remote)")
            }
        }
        let decided: Set<ConflictRecord.Outcome> = [.keptLocal, .keptRemote, .merged, .awaitingDecision]
        for entry in audit where decided.contains(entry.outcome) && !checkedConflicts.contains(entry.id) {
            checkedConflicts.insert(entry.id)
            let record = "\(entry.collection.name)|\(entry.recordId)"
            let touched = otherWrites[record] != nil || otherWrites.keys.contains { $0.hasPrefix(record + "|") }
            if !touched {
                func shown(_ values: FieldValues, _ field: String) -> String {
                    values[field].map { $0 ?? "null" } ?? "-"
                }
                let values = entry.fields.map {
                    "\($0): base \(shown(entry.base, $0)), local \(shown(entry.local, $0)), remote \(shown(entry.remote, $0))"
                }
                fail(
                    "conflict \(entry.id) (\(entry.outcome.rawValue)) on \(record), which nobody else wrote: the engine took its own "
                        + "write for another's (\(values.joined(separator: "; ")); remote version "
                        + "\(entry.remoteVersion.map(String.init) ?? "-"))")
            }
        }
    }

    /// 1: every acknowledged local edit is on the server, overridden in the audit log, superseded by a later edit,
    /// or still visible in the outbox — never silently gone.
    private func checkLedger() {
        guard let entries = try? engine.outboxEntries(), let audit = try? engine.conflicts(limit: 100_000) else {
            return fail("the outbox or the audit log cannot be read")
        }
        for index in ledger.indices where !ledger[index].settled {
            let edit = ledger[index]
            if let field = edit.field {
                // Superseded by an edit made later (a shop tool's edit joins the ledger when it is queued, but it
                // was made when it was written).
                let superseded = ledger.indices.contains { (other: Int) -> Bool in
                    let later: LedgerEntry = ledger[other]
                    guard other != index, later.collection == edit.collection, later.id == edit.id,
                        later.field == field
                    else { return false }
                    return later.step > edit.step || (later.step == edit.step && other > index)
                }
                let onServer = server.held(edit.collection, edit.id, field, edit.value, since: edit.step)
                // In the audit log: an entry made after the edit about its field, or a decision on a conflict that
                // was shown this very value (an edit made while the record's conflict was open joins it).
                // The record itself gone — deleted on the server, or its create (no base) discarded — settles every
                // edit of it made before (a create's body leaves out its null fields).
                let audited = audit.contains {
                    $0.collection == edit.collection && $0.recordId == edit.id
                        && (($0.id > edit.auditMark && ($0.fields.contains(field) || $0.local[field] != nil))
                            || (!$0.isOpen && $0.local[field] == .some(edit.value))
                            || ($0.id > edit.auditMark
                                && ($0.outcome == .deletedRemotely || ($0.outcome == .discarded && $0.base.isEmpty))))
                }
                if superseded || onServer || audited {
                    ledger[index].settled = true
                    continue
                }
                // (A create's body leaves out what is null: a field it does not carry is created null.)
                let visible = entries.contains {
                    $0.collection == edit.collection && $0.recordId == edit.id
                        && ($0.fields[field] == .some(edit.value)
                            || ($0.kind == .create && edit.value == nil && $0.fields[field] == nil))
                }
                if !visible {
                    fail(
                        "a local edit is gone: \(edit.collection.name) \(edit.id).\(field) = \(edit.value ?? "null") (step \(edit.step))"
                    )
                    noteRecord(edit, entries, audit)
                    ledger[index].settled = true
                }
            } else {
                // (A message counts with its content: an id reused for another one is not that one delivered.)
                let stored =
                    edit.collection == .ticketMessages
                    ? server.held(.ticketMessages, edit.id, "content", edit.value, since: 0)
                    : server.everStored.contains("\(edit.collection.name)|\(edit.id)")
                if stored || audit.contains(where: { $0.collection == edit.collection && $0.recordId == edit.id }) {
                    ledger[index].settled = true
                } else if !entries.contains(where: {
                    $0.collection == edit.collection && $0.recordId == edit.id && $0.kind == .create
                }) {
                    fail("a new \(edit.collection.name) record is gone: \(edit.id) (step \(edit.step))")
                    noteRecord(edit, entries, audit)
                    ledger[index].settled = true
                }
            }
        }
    }

    /// What the replay of a lost edit needs to tell why: the record's entries, its audit entries, the server's copy.
    private func noteRecord(_ edit: LedgerEntry, _ entries: [OutboxEntry], _ audit: [ConflictRecord]) {
        for entry in entries where entry.collection == edit.collection && entry.recordId == edit.id {
            note(
                "   outbox #\(entry.seq) \(entry.kind) \(entry.state) sent=\(entry.sent) attempts=\(entry.attempts) \(entry.fields) \(entry.lastError ?? "")"
            )
        }
        for entry in audit where entry.collection == edit.collection && entry.recordId == edit.id {
            note(
                "   audit #\(entry.id) \(entry.outcome) fields=\(entry.fields) local=\(entry.local) base=\(entry.base)")
        }
        note("   server: \(server.record(edit.collection, edit.id)?.text ?? "none")")
    }

    /// An edit whose value the server holds now has reached it (or agreed with it): settled, whatever comes later.
    private func settleHeldEdits() {
        for index in ledger.indices where !ledger[index].settled {
            let edit = ledger[index]
            if let field = edit.field, server.held(edit.collection, edit.id, field, edit.value, since: edit.step) {
                ledger[index].settled = true
            }
        }
    }

    /// 4: every run ended, and sent a number of requests in proportion to its work.
    private func checkRuns(engineDied: Bool = false) {
        for finished in runs.drain() {
            let (report, requests, range) = (finished.report, finished.requests, finished.range)
            // Every change still to be sent is accounted for: a run that ends with one waiting says when it is due
            // (the scheduler plans the next push-only run from that figure, and from nothing else).
            if !finished.waiting.isEmpty, report.nextChangeDueMilliseconds == nil {
                fail(
                    "run \(report.run) ended with changes waiting to be sent (seq \(finished.waiting.prefix(5).map(String.init).joined(separator: ", "))) and reported none due: nothing would send them before the next periodic run"
                )
            }
            // The store never fails here: nothing in the simulation fills the disk or damages the file, so an SQLite
            // error in a run (a constraint a trigger or a statement broke) is the engine's own bug, even when a
            // later run gets past it (seed 2320: a trigger's INSERT OR IGNORE under the pull's upsert failed the
            // page). Only an engine the simulator killed meets its store closed under it.
            let failures =
                [report.stop].compactMap { $0 } + report.failedCollections.sorted { $0.key < $1.key }.map(\.value)
            if !engineDied, let error = failures.first(where: { $0.contains("store: ") || $0.contains("SQLite error") })
            {
                fail("run \(report.run) met an error of the store: \(error.prefix(200))")
            }
            // One collection's failure never stops the others: a run that reached its pull and did not end for a
            // reason that concerns the whole run (offline, a refused token, a wait, a stop) asked for every collection
            // it was to pull, or names that collection's failure in its report. (Judged by the requests, not by the
            // report's own account: an engine whose first failure ends the run reports no failed collection.)
            let runWide = ["offline:", "authentication failed:", "rate limited:", "stopped"]
            if let stop = report.stop, !runWide.contains(where: { stop.hasPrefix($0) }) {
                let asked = Set(
                    self.requests.slice(range).compactMap { line -> String? in
                        guard line.hasPrefix("GET /api/v1/"), line.contains("/changes") else { return nil }
                        return line.split(separator: "/").dropFirst(3).first.map(String.init)
                    })
                if !asked.isEmpty {
                    let failed = Set(report.failedCollections.keys)
                    for name in report.requestedCollections where !asked.contains(name) && !failed.contains(name) {
                        fail(
                            "run \(report.run) ended (\(stop.prefix(100))) without asking for \(name), and names no failure of it"
                        )
                    }
                }
            }
            // A request loop is not bounded by its own results (a stuck feed "pulls" the same records again and
            // again): pages are bounded by what the server holds, twice over (a resync), plus a few per collection.
            let work = report.pushed + report.pushFailures + report.dead + report.conflicts
            let held = SyncCollection.allCases.reduce(0) { total, collection in
                total + (server.records[collection]?.count ?? 0) + (server.tombstones[collection]?.count ?? 0)
            }
            let pages = 2 * (held / max(1, settings.pageSize) + 1) + 6 * 5
            let bound = 25 + 6 * work + 3 * pages + 2 * (report.rewound + report.staleCopies)
            if let stop = report.stop, stop.contains("more for Retry-After"),
                server.serverNow.millisecondsSince1970 > askedToWaitUntil + 2000
            {
                fail("run \(report.run) still held requests back after the server's Retry-After had passed: \(stop)")
            }
            if requests > bound {
                fail(
                    "run \(report.run) sent \(requests) requests for \(work) changes and \(pages) pages (bound \(bound))"
                )
            }
            coverage.runs += 1
            coverage.record(report)
            note(
                "   run \(report.run) ended: \(report.stop ?? "ok")\(report.failedCollections.isEmpty ? "" : " \(report.failedCollections.sorted { $0.key < $1.key })")"
            )
        }
    }

    /// 5: after the quiet sync, the replica is the server with the pending local changes on top, and holds no record
    /// the server does not (but for new messages not yet accepted).
    /// After a quiet sync of every collection each table has its list indexes, whatever load in bulk a crash or a
    /// failed pull interrupted (`ListIndexes`).
    private func checkListIndexes() {
        do {
            let missing = try store.read { db in
                try SyncCollection.allCases.flatMap { try ListIndexes.missing(on: $0.name, db).map(\.name) }
            }
            if !missing.isEmpty { fail("list indexes missing after a quiet sync: \(missing.joined(separator: ", "))") }
        } catch {
            fail("reading the schema: \(error)")
        }
    }

    private func checkConvergence() {
        do {
            let entries = try engine.outboxEntries()
            let live = entries.filter { $0.state != .dead }
            try compare(Order.self, live: live)
            try compare(Device.self, live: live)
            try compare(Client.self, live: live)
            try compare(Ticket.self, live: live)
            try compare(TicketMessage.self, live: live)
        } catch {
            fail("reading the replica: \(error)")
        }
    }

    private func compare<R: ReplicaRecord>(_ type: R.Type, live: [OutboxEntry]) throws {
        let collection = R.collection
        let rows = try store.read { db in try R.fetchAll(db) }
        let local = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
        let creates = Set(try engine.outboxEntries().filter { $0.kind == .create }.map(\.recordId))
        // An order the server has not created shows no number (never one that could collide with a real one).
        for row in rows where creates.contains(row.id) {
            if let order = row as? Order, order.orderNumber != nil {
                fail("order \(order.id), not on the server yet, shows number \(order.orderNumber!)")
            }
        }
        for id in server.ids(collection) {
            guard let body = server.record(collection, id) else { continue }
            var expected = try JSONDecoder().decode(R.self, from: body.data)
            if var editable = expected as? any EditableRecord {
                var overlay: FieldValues = [:]
                for entry in live where entry.collection == collection && entry.recordId == id && entry.kind == .update
                {
                    overlay.merge(entry.fields) { $1 }
                }
                editable.apply(overlay)
                expected = editable as! R
            }
            // A record put back in its old place in the feed cannot be seen by any client until it is written
            // again (then it moves to the end of the feed), or until the client writes it and meets a 412.
            if server.unannounced.contains("\(collection.name)|\(id)") { continue }
            guard let row = local[id] else {
                fail("\(collection.name) \(id) is on the server but not in the replica")
                continue
            }
            if row != expected { fail("\(collection.name) \(id) differs: replica \(row) ≠ expected \(expected)") }
        }
        for id in local.keys.sorted() where server.record(collection, id) == nil && !creates.contains(id) {
            fail("\(collection.name) \(id) is in the replica but not on the server (a ghost record)")
        }
    }
}

/// A count shared with the tasks that run engine calls.
final class CallCounter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add(_ delta: Int) { count.withLock { $0 += delta } }
}

extension Array {
    /// The element at `index` modulo the count; nil when empty.
    func element(_ index: Int) -> Element? { isEmpty ? nil : self[((index % count) + count) % count] }
}
