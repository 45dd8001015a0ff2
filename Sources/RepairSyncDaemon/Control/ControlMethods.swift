internal import Foundation
internal import GRDB
public import Logging
public import RepairSyncControl
public import RepairSyncEngine
internal import RepairSyncModels
public import RepairSyncStore

/// Every JSON-RPC method of the control socket (docs/rpc.md), over the engine and the replica. Params are named and
/// checked (unknown names are refused); engine and store errors become the documented application codes.
public struct ControlMethods: Sendable {
    let engine: SyncEngine
    let store: ReplicaStore
    let scheduler: SchedulerService
    let reload: @Sendable () async -> Result<[String], ConfigurationError>
    let logger: Logger
    let authorization: PeerAuthorization
    let metrics: SyncMetrics
    /// Ends the daemon (after `purge`).
    let shutdown: @Sendable () async -> Void
    var queries: ReplicaQueries { ReplicaQueries(store: store) }

    public init(
        engine: SyncEngine, store: ReplicaStore, scheduler: SchedulerService, logger: Logger,
        authorization: PeerAuthorization = PeerAuthorization(group: nil), metrics: SyncMetrics = SyncMetrics(textfile: nil),
        shutdown: @escaping @Sendable () async -> Void = {},
        reload: @escaping @Sendable () async -> Result<[String], ConfigurationError>
    ) {
        self.authorization = authorization
        self.metrics = metrics
        self.shutdown = shutdown
        self.engine = engine
        self.store = store
        self.scheduler = scheduler
        self.logger = logger
        self.reload = reload
    }

    /// The method names, for docs and `repairctl` completion.
    public static let names = [
        "ping", "version", "status", "subscribe", "queueChange", "sync", "pending", "retry", "conflicts",
        "resolveConflict", "pause", "resume", "reload", "updateOrder", "updateDevice", "replyToTicket", "listOrders",
        "getOrder", "listDevices", "listClients", "getClient", "listTickets", "getTicket", "dashboardStats", "purge",
        "backup", "doctor", "stats",
    ] + bookingMethods

    public var dispatcher: JSONRPCDispatcher<ControlRequestContext> {
        JSONRPCDispatcher { method, params, context in
            guard authorization.allows(method, for: context.peer) else {
                logger.warning(
                    "control request refused", metadata: ["method": "\(method)", "uid": "\(context.peer.uid)", "pid": "\(context.peer.pid)"])
                throw JSONRPCError.unauthorizedPeer(
                    "\(method) is for root, the daemon's user and members of the socket's group; uid \(context.peer.uid) may read the status only")
            }
            if Self.mutatingMethods.contains(method) {
                logger.notice(
                    "control change requested",
                    metadata: [
                        "method": "\(method)", "uid": "\(context.peer.uid)", "pid": "\(context.peer.pid)",
                        "id": "\(params?["id"].map(Output.describe) ?? params?["ticketId"].map(Output.describe) ?? "")",
                    ])
            }
            do {
                return try await self.call(method, params, context)
            } catch let error as JSONRPCError {
                throw error
            } catch let error as EngineError {
                throw Self.rpcError(error)
            } catch let error as DatabaseError {
                logger.error("store error in \(method)", metadata: ["error": "\(error)"])
                if error.resultCode == .SQLITE_FULL {
                    throw JSONRPCError.storeError(
                        "the disk holding the store is full: nothing was changed (what was acknowledged before is kept); free some space and try again")
                }
                throw JSONRPCError.storeError("the store refused: \(error.message ?? "\(error.resultCode)")")
            }
        }
    }

    /// Methods that change something (logged with the peer's uid and pid).
    static let mutatingMethods: Set<String> = Set([
        "queueChange", "sync", "retry", "resolveConflict", "pause", "resume", "reload", "updateOrder", "updateDevice",
        "replyToTicket", "purge",
    ] + bookingMethods)

    /// A short text of a param value for a log line.
    enum Output {
        static func describe(_ value: JSONValue) -> String { value.stringValue ?? value.serialized }
    }

    static func rpcError(_ error: EngineError) -> JSONRPCError {
        switch error {
        case .unknownRecord, .notFound: .notFound(error.description)
        case .invalidValue(let field, let reason): .invalidValue(field, reason)
        case .corruptOutbox: .storeError(error.description)
        }
    }

    // swiftlint:disable:next cyclomatic_complexity
    func call(_ method: String, _ params: JSONValue?, _ context: ControlRequestContext) async throws -> JSONValue {
        switch method {
        case "ping":
            _ = try JSONRPCParams(params, allowed: [])
            return .string("pong")
        case "version":
            _ = try JSONRPCParams(params, allowed: [])
            return .object([("version", .string(ProductInfo.version)), ("protocol", .number(1))])
        case "status":
            _ = try JSONRPCParams(params, allowed: [])
            return StatusView.json(await engine.status, scheduler: scheduler)
        case "subscribe":
            _ = try JSONRPCParams(params, allowed: [])
            let scheduler = scheduler
            let updates = await engine.statusUpdates().map { StatusView.json($0, scheduler: scheduler) }
            try context.subscribe(method: "statusChanged", to: updates)
            return .bool(true)
        case "queueChange":
            let named = try JSONRPCParams(params, allowed: ["kind", "id"])
            let kindName = try named.string("kind")
            guard let kind = LocalChanges.ChangeKind(rawValue: kindName) else {
                let known = LocalChanges.ChangeKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw JSONRPCError.invalidParams("kind", "must be one of \(known), not \(kindName)")
            }
            let result = try await engine.queueChange(kind, id: try named.string("id"))
            await scheduler.localChange()
            // queueChange returns with the status counts re-read after its commit: no count query of its own.
            let status = await engine.status
            let pending = status.pending + status.failed + status.held
            switch result {
            case .queued(let seq, let fields):
                return .object([
                    ("queued", .bool(true)), ("seq", .number(String(seq))), ("fields", .array(fields.map { .string($0) })),
                    ("pending", .number(pending)),
                ])
            case .nothingChanged(let reason):
                return .object([
                    ("queued", .bool(false)), ("reason", .string(reason)), ("pending", .number(pending)),
                ])
            }
        case "sync":
            let named = try JSONRPCParams(params, allowed: ["collections", "wait"])
            let collections = try Self.collections(named.optionalStrings("collections"))
            if try named.optionalBool("wait") == true {
                // Offline, nothing but the probe talks to the API: ask it to check now, and run only if it answers.
                if !scheduler.snapshot.online {
                    await scheduler.probe.check()
                    guard scheduler.probe.isOnline else {
                        throw JSONRPCError.unavailable(
                            "offline: the API is unreachable; pending changes go out when it is back")
                    }
                }
                let report: SyncReport
                if let collections {
                    report = await engine.sync(collections)
                } else {
                    report = await engine.performFullSync()
                }
                return try JSONValue.encoding(report)
            }
            await scheduler.requestRun(collections)
            return .object([("started", .bool(true))])
        case "pending":
            let named = try JSONRPCParams(params, allowed: ["state"])
            let state = try named.optionalString("state")
            if let state, OutboxEntry.State(rawValue: state) == nil {
                throw JSONRPCError.invalidParams("state", "must be one of pending, in_flight, failed, dead, held")
            }
            let entries = try engine.outboxEntries().filter { state == nil || $0.state.rawValue == state }
            return try JSONValue.encoding(entries)
        case "retry":
            let named = try JSONRPCParams(params, allowed: ["ids"])
            let ids = try named.value("ids").map { value -> [Int64] in
                guard case .array(let values) = value, let ids = Optional(values.compactMap { $0.intValue.map(Int64.init) }),
                    ids.count == values.count
                else { throw JSONRPCError.invalidParams("ids", "must be an array of change numbers (seq)") }
                return ids
            }
            let dead = try engine.outboxEntries().filter { $0.state == .dead }.map(\.seq)
            let targets = ids ?? dead
            for seq in targets { try await engine.retryDead(seq: seq) }
            if !targets.isEmpty { await scheduler.localChange() }
            return .object([("retried", .number(targets.count))])
        case "conflicts":
            let named = try JSONRPCParams(params, allowed: ["open", "limit"])
            let open = try named.optionalBool("open") ?? false
            let limit = try named.optionalInt("limit", in: 1...10_000) ?? 1000
            return try JSONValue.encoding(try engine.conflicts(openOnly: open, limit: limit))
        case "resolveConflict":
            let named = try JSONRPCParams(params, allowed: ["id", "keep"])
            guard let id = try named.optionalInt("id", in: 1...Int.max) else {
                throw JSONRPCError.invalidParams("id", "is required")
            }
            try await engine.resolveConflict(id: Int64(id), try Self.decision(named.value("keep")))
            await scheduler.localChange()
            return .object([("resolved", .bool(true))])
        case "pause", "resume":
            _ = try JSONRPCParams(params, allowed: [])
            await scheduler.setPaused(method == "pause")
            return .object([("paused", .bool(scheduler.snapshot.paused))])
        case "reload":
            _ = try JSONRPCParams(params, allowed: [])
            switch await reload() {
            case .success(let unknown):
                return .object([("reloaded", .bool(true)), ("unknownKeys", .array(unknown.map { .string($0) }))])
            case .failure(let error):
                throw JSONRPCError.invalidValue(error.key, "\(error.message) (the running configuration is kept)")
            }
        case "updateOrder", "updateDevice":
            let fieldNames = method == "updateOrder" ? ["status", "notes"] : ["status", "diagnosis", "resolution"]
            let named = try JSONRPCParams(params, allowed: Set(fieldNames + ["id"]))
            var fields: FieldValues = [:]
            for name in fieldNames where named.value(name) != nil {
                fields[name] = .some(try named.optionalString(name))
            }
            guard !fields.isEmpty else {
                throw JSONRPCError.invalidParams(fieldNames.joined(separator: "/"), "at least one is required")
            }
            let entry = try await engine.update(
                method == "updateOrder" ? .orders : .devices, id: try named.string("id"), fields: fields)
            await scheduler.localChange()
            return try JSONValue.encoding(entry)
        case "replyToTicket":
            let named = try JSONRPCParams(params, allowed: ["ticketId", "content", "internal"])
            let message = try await engine.createTicketMessage(
                ticketId: try named.string("ticketId"), content: try named.string("content"),
                isInternal: try named.optionalBool("internal") ?? false)
            await scheduler.localChange()
            return try JSONValue.encoding(message)
        case "listOrders":
            let named = try JSONRPCParams(params, allowed: ["status", "clientId", "limit", "offset"])
            return try JSONValue.encoding(
                try queries.orders(
                    status: named.optionalString("status"), clientId: named.optionalString("clientId"),
                    page: Self.page(named)))
        case "getOrder":
            let named = try JSONRPCParams(params, allowed: ["id", "orderNumber", "includePasscodes"])
            let reveal = try named.optionalBool("includePasscodes") == true
            let id = try named.optionalString("id")
            let number = try named.optionalInt("orderNumber", in: 0...Int.max)
            guard (id == nil) != (number == nil) else {
                throw JSONRPCError.invalidParams("id", "or orderNumber is required (one of them)")
            }
            guard let (order, client, devices) = try queries.order(id: id, number: number) else {
                throw JSONRPCError.notFound("no order \(id ?? "#\(number!)") in the replica")
            }
            if reveal {
                logger.notice(
                    "passcodes revealed",
                    metadata: ["order": "\(order.id)", "uid": "\(context.peer.uid)", "pid": "\(context.peer.pid)"])
            }
            return .object([
                ("order", try JSONValue.encoding(order)), ("client", try client.map { try JSONValue.encoding($0) } ?? .null),
                ("devices", try JSONValue.encoding(devices.map { passcodes($0, reveal: reveal) })),
            ])
        case "listDevices":
            let named = try JSONRPCParams(params, allowed: ["orderId", "status", "limit", "offset", "includePasscodes"])
            let reveal = try named.optionalBool("includePasscodes") == true
            let devices = try queries.devices(
                orderId: named.optionalString("orderId"), status: named.optionalString("status"), page: Self.page(named))
            if reveal {
                logger.notice("passcodes revealed", metadata: ["uid": "\(context.peer.uid)", "pid": "\(context.peer.pid)"])
            }
            return try JSONValue.encoding(devices.map { passcodes($0, reveal: reveal) })
        case "listClients":
            let named = try JSONRPCParams(params, allowed: ["search", "limit", "offset"])
            return try JSONValue.encoding(try queries.clients(search: named.optionalString("search"), page: Self.page(named)))
        case "getClient":
            let named = try JSONRPCParams(params, allowed: ["id"])
            let id = try named.string("id")
            guard let client = try queries.client(id: id) else { throw JSONRPCError.notFound("no client \(id) in the replica") }
            return try JSONValue.encoding(client)
        case "listTickets":
            let named = try JSONRPCParams(params, allowed: ["status", "limit", "offset"])
            return try JSONValue.encoding(try queries.tickets(status: named.optionalString("status"), page: Self.page(named)))
        case "getTicket":
            let named = try JSONRPCParams(params, allowed: ["id"])
            let id = try named.string("id")
            guard let (ticket, messages) = try queries.ticket(id: id) else {
                throw JSONRPCError.notFound("no ticket \(id) in the replica")
            }
            return .object([("ticket", try JSONValue.encoding(ticket)), ("messages", try JSONValue.encoding(messages))])
        case "dashboardStats":
            let named = try JSONRPCParams(params, allowed: ["period"])
            let period = try named.optionalString("period") ?? "today"
            guard ["today", "week", "month"].contains(period) else {
                throw JSONRPCError.invalidParams("period", "must be today, week or month")
            }
            guard let snapshot = try queries.dashboard(period: period) else {
                throw JSONRPCError.notFound("no dashboard snapshot for \(period) yet: it is taken by the next full sync")
            }
            let stats = try JSONParser().parse(snapshot.body)
            let age = max(0, (Timestamp.now().millisecondsSince1970 - snapshot.fetchedAt) / 1000)
            return .object([
                ("period", .string(period)), ("stats", stats),
                ("fetchedAt", .string(Timestamp(millisecondsSince1970: snapshot.fetchedAt).rfc3339)),
                ("ageSeconds", .number(String(age))),
            ])
        case "stats":
            _ = try JSONRPCParams(params, allowed: [])
            return metrics.stats(status: await engine.status, responses: engine.api.responseCounts)
        case "doctor":
            _ = try JSONRPCParams(params, allowed: [])
            let checks = await DaemonChecks(engine: engine, store: store, scheduler: scheduler, interval: scheduler.interval).run()
            return .array(checks.map(\.json))
        case "backup":
            _ = try JSONRPCParams(params, allowed: [])
            guard let path = store.path else { throw JSONRPCError.storeError("an in-memory store has no backup") }
            let copy = (path as NSString).deletingLastPathComponent + "/backup-\(UUID().uuidString).sqlite"
            defer { _ = ReplicaStore.removeFiles(at: copy) }
            let problems = try store.backup(to: copy)
            guard problems.isEmpty else {
                throw JSONRPCError.storeError("the backup copy failed its integrity check: \(problems.prefix(3))")
            }
            // Streamed in notifications, each written before the next is read: the client's pace, no buffering.
            guard let file = FileHandle(forReadingAtPath: copy) else {
                throw JSONRPCError.storeError("cannot read the backup copy")
            }
            defer { try? file.close() }
            var total = 0
            while true {
                let chunk = file.readData(ofLength: 256 * 1024)
                if chunk.isEmpty { break }
                total += chunk.count
                try await context.stream(
                    method: "backupChunk", params: .object([("data", .string(chunk.base64EncodedString()))]))
            }
            logger.notice(
                "backup sent", metadata: ["bytes": "\(total)", "uid": "\(context.peer.uid)", "pid": "\(context.peer.pid)"])
            return .object([("bytes", .number(total)), ("integrity", .string("ok"))])
        case "purge":
            let named = try JSONRPCParams(params, allowed: ["force"])
            let pending = try engine.pendingChangesCount()
            if pending > 0, try named.optionalBool("force") != true {
                throw JSONRPCError.invalidValue(
                    "force",
                    "\(pending) change(s) are not on the server yet and would be lost: sync first, or purge with force")
            }
            await engine.stop()
            try store.close()
            let removed = store.path.map(ReplicaStore.removeFiles(at:)) ?? []
            logger.notice(
                "store purged; the daemon stops",
                metadata: [
                    "removed": "\(removed)", "discarded_changes": "\(pending)", "uid": "\(context.peer.uid)",
                    "pid": "\(context.peer.pid)",
                ])
            // The daemon has nothing left to serve: it stops once this reply is out (exit 0, not restarted).
            let shutdown = shutdown
            context.afterReply { await shutdown() }
            return .object([
                ("removed", .array(removed.map { .string($0) })), ("discardedChanges", .number(pending)),
                ("stopping", .bool(true)),
            ])
        default:
            if let result = try await callBooking(method, params) { return result }
            throw JSONRPCError.methodNotFound(method)
        }
    }

    static func page(_ params: JSONRPCParams) throws(JSONRPCError) -> ReplicaQueries.Page {
        ReplicaQueries.Page(
            limit: try params.optionalInt("limit", in: 1...1000) ?? 100,
            offset: try params.optionalInt("offset", in: 0...Int.max) ?? 0)
    }

    static func collections(_ names: [String]?) throws(JSONRPCError) -> Set<SyncCollection>? {
        guard let names else { return nil }
        var collections = Set<SyncCollection>()
        for name in names {
            guard let collection = SyncCollection(rawValue: name) else {
                let known = SyncCollection.pullOrder.map(\.name).joined(separator: ", ")
                throw JSONRPCError.invalidParams("collections", "has \(name); known: \(known)")
            }
            collections.insert(collection)
        }
        return collections
    }

    /// `"local"`, `"remote"`, or `{"field": "local" | "remote"}`.
    static func decision(_ keep: JSONValue?) throws(JSONRPCError) -> ConflictDecision {
        switch keep {
        case .string("local")?: return .keepLocal
        case .string("remote")?: return .keepRemote
        case .object(let members)?:
            var choices: [String: Bool] = [:]
            for member in members {
                switch member.value {
                case .string("local"): choices[member.key] = true
                case .string("remote"): choices[member.key] = false
                default: throw JSONRPCError.invalidParams("keep", "field \(member.key) must be \"local\" or \"remote\"")
                }
            }
            return .perField(choices)
        default:
            throw JSONRPCError.invalidParams("keep", #"must be "local", "remote" or {"field": "local"|"remote"}"#)
        }
    }

    /// Passcodes are sealed in the replica; the socket hands them out, opened, only when asked explicitly.
    func passcodes(_ device: Device, reveal: Bool) -> Device {
        var device = device
        device.passcode = reveal ? engine.configuration.passcodeCipher?.open(device.passcode) : nil
        return device
    }
}
