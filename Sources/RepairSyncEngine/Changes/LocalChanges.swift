public import Foundation
internal import GRDB
public import RepairSyncModels
internal import RepairSyncStore

/// The two ways a local change gets in. Both write the row (if the engine owns the write) and the outbox entry in
/// one transaction, committed with `synchronous=FULL` before they return: an acknowledged change survives a
/// power cut.
public struct LocalChanges: Sendable {
    let store: ReplicaStore
    let clock: any EngineClock
    /// Seals the passcodes of devices booked in here, as the replica keeps them (nil: no key, none kept).
    var cipher: PasscodeCipher? = nil

    /// What `queueChange` names: a record another program has already written in the store (declared in the models,
    /// which the control protocol shares).
    public typealias ChangeKind = RepairSyncModels.ChangeKind

    public enum QueueResult: Sendable, Hashable {
        /// Queued these fields (for a message: the message).
        case queued(seq: Int64, fields: [String])
        /// The row's change is in the outbox already — queued by an earlier call, by the engine's own edit, or by a
        /// sync run that found the row changed before this call came — in the change `seq` (the latest holding
        /// these fields). Nothing new was queued, and nothing needs to be: the change will reach the server.
        case alreadyQueued(seq: Int64, fields: [String])
        /// Nothing to queue, why (`NothingToQueue`) and the same in words.
        case nothingChanged(NothingToQueue, reason: String)
    }

    /// Why `queueChange` found nothing to queue.
    public enum NothingToQueue: Sendable, Hashable {
        /// The server has it: the row is the server's copy (also when a sync run found the edit first and has
        /// pushed it), or the record came from the server — a message it sent, a record whose creation it has.
        case onServer
        /// The row's creation is dead — refused by the server, given up on after its attempts, or waiting for a
        /// create that is — in the change `seq`, kept for a `retry` or a `discard`. Queueing the row again would send
        /// nothing new.
        case dead(seq: Int64)
    }

    /// Why a row's change is dead, in words, naming it.
    static func deadReason(_ what: String, _ entry: OutboxEntry) -> String {
        let why =
            entry.blockedBy.map { "waits for \($0), which is dead" }
            ?? "is dead (\(entry.lastError ?? "refused by the server"))"
        return "\(what) \(why) (change \(entry.seq)): retry or discard it"
    }

    // MARK: Mutations the engine performs

    /// Changes fields of an order or a device (names as in the API: status, notes / status, diagnosis,
    /// resolution) and queues the change, in a transaction of its own.
    @discardableResult
    public func update(_ collection: SyncCollection, id: String, fields: FieldValues) throws -> OutboxEntry {
        let work = try updateWork(collection, id: id, fields: fields)
        return try store.write(work)
    }

    /// The same, sharing one commit with concurrent callers (`GroupCommit`): returns once the commit holding the
    /// change is on disk.
    @discardableResult
    public func update(_ collection: SyncCollection, id: String, fields: FieldValues) async throws -> OutboxEntry {
        let work = try updateWork(collection, id: id, fields: fields)
        return try await store.groupCommit.write(reporting: true, work)
    }

    private func updateWork(_ collection: SyncCollection, id: String, fields: FieldValues) throws
        -> @Sendable (Database) throws -> OutboxEntry
    {
        switch collection {
        case .orders: return try updateWork(Order.self, id: id, fields: fields)
        case .devices: return try updateWork(Device.self, id: id, fields: fields)
        default: throw EngineError.invalidValue(field: "collection", reason: "\(collection) cannot be changed locally")
        }
    }

    private func updateWork<R: EditableRecord>(_ type: R.Type, id: String, fields: FieldValues) throws
        -> @Sendable (Database) throws -> OutboxEntry
    {
        guard !fields.isEmpty else { throw EngineError.invalidValue(field: "fields", reason: "nothing to change") }
        for (name, value) in fields {
            guard R.editableFields.contains(name) else {
                throw EngineError.invalidValue(
                    field: name, reason: "not changeable; changeable: \(R.editableFields.joined(separator: ", "))")
            }
            if name == "status" { try Self.validateStatus(R.collection, value) }
            if let value { try Self.checkLength(name, value) }
        }
        let now = clock.now()
        let names = fields.keys.sorted()
        let sql = "UPDATE \(R.collection.name) SET \(names.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
        let cipher = cipher
        return { db in
            let values: [(any DatabaseValueConvertible)?] = names.map { fields[$0] ?? nil } + [id]
            try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(values))
            guard db.changesCount > 0 else {
                throw EngineError.unknownRecord(collection: R.collection.name, id: id)
            }
            // A row another program inserted and never queued is not on the server: a PATCH would find nothing. Its
            // creation is queued from the row, which holds this edit already.
            if try Self.isUnqueuedInsert(R.collection, id: id, db) {
                return try Self.queueCreateFromRow(R.collection, id: id, cipher: cipher, now: now, db)
            }
            return try Outbox.enqueueUpdate(db, collection: R.collection, id: id, fields: fields, now: now)
        }
    }

    /// A text no longer than the API takes (`NewRecordShape.isTooLong`).
    static func checkLength(_ field: String, _ value: String) throws {
        guard !NewRecordShape.isTooLong(value) else {
            throw EngineError.invalidValue(
                field: field,
                reason: "longer than \(NewRecordShape.maximumTextLength) characters (\(value.unicodeScalars.count))")
        }
    }

    static func validateStatus(_ collection: SyncCollection, _ value: String?) throws {
        guard let value else { throw EngineError.invalidValue(field: "status", reason: "cannot be cleared") }
        let known: Bool =
            switch collection {
            case .orders: OrderStatus.parse(value).isKnown
            case .devices: DeviceStatus.parse(value).isKnown
            default: false
            }
        guard known else { throw EngineError.invalidValue(field: "status", reason: "unknown status \(value)") }
    }

    /// Writes a new ticket message (client-generated id) and queues it, in a transaction of its own.
    ///
    /// The id makes the call safe to retry: when a message with this id already exists with the same ticket,
    /// content and visibility, it is returned and nothing is created (a caller whose reply was lost calls again);
    /// with other content it is refused (`invalidValue` on `id`).
    @discardableResult
    public func createTicketMessage(
        ticketId: String, content: String, isInternal: Bool = false, id: String = UUID().uuidString.lowercased()
    ) throws -> TicketMessage {
        try store.write(try messageWork(ticketId: ticketId, content: content, isInternal: isInternal, id: id))
    }

    /// The same, sharing one commit with concurrent callers (`GroupCommit`).
    @discardableResult
    public func createTicketMessage(
        ticketId: String, content: String, isInternal: Bool = false, id: String = UUID().uuidString.lowercased()
    ) async throws -> TicketMessage {
        try await store.groupCommit.write(
            reporting: true, try messageWork(ticketId: ticketId, content: content, isInternal: isInternal, id: id))
    }

    private func messageWork(ticketId: String, content: String, isInternal: Bool, id: String) throws
        -> @Sendable (Database) throws -> TicketMessage
    {
        guard !content.allSatisfy(\.isWhitespace) else {
            throw EngineError.invalidValue(field: "content", reason: "a message cannot be blank")
        }
        try Self.checkLength("content", content)
        guard NewRecordShape.isClientId(id) else {
            throw EngineError.invalidValue(field: "id", reason: NewRecordShape.newIdProblem(id))
        }
        let now = clock.now()
        let message = TicketMessage(
            id: id, ticketId: ticketId, content: content, senderType: .staff, senderName: nil, senderId: nil,
            isInternal: isInternal, createdAt: now, updatedAt: now, version: 0)
        return { db in
            if let existing = try TicketMessage.fetchOne(db, key: id) {
                // The server's copy may hold the content as the server stored it (`sameRecord`).
                let syncedAt = try String?.fetchOne(
                    db, sql: "SELECT synced_at FROM ticket_messages WHERE id = ?", arguments: [id])
                let onServer = syncedAt.flatMap { $0 } != nil
                let sameContent =
                    onServer ? Self.loosely(existing.content) == Self.loosely(content) : existing.content == content
                guard existing.ticketId == ticketId, sameContent, existing.isInternal == isInternal
                else {
                    throw EngineError.invalidValue(
                        field: "id", reason: "message \(id) already exists with another ticket, content or visibility")
                }
                return existing
            }
            // Checked once the message is known to be new: a call repeated with an id from before ids had to be
            // lowercase still answers the message it made.
            try Self.requireNewId(id)
            guard try Ticket.fetchOne(db, key: ticketId) != nil else {
                throw EngineError.unknownRecord(collection: "tickets", id: ticketId)
            }
            try message.upsert(db, syncedAt: nil)
            try Outbox.enqueueMessage(db, message: message, now: now)
            return message
        }
    }

    // MARK: Changes another program made

    /// Finds what another program changed in a record (the row against its base copy and what is already
    /// queued) and queues exactly those fields.
    ///
    /// Concurrent calls share one commit (`GroupCommit`); each returns once the commit holding its change is on disk.
    /// `create` tells whether a creation was queued — an "updated" record too, when another program inserted it and
    /// never queued it, or when its change joined a create still to be sent — told by the transaction itself, so the
    /// caller needs no read of its own to know whether the booked-in counts moved.
    public func queueChange(_ kind: ChangeKind, id: String) async throws -> (result: QueueResult, create: Bool) {
        switch kind {
        case .orderUpdated: return try await queueUpdate(Order.self, id: id)
        case .deviceUpdated: return try await queueUpdate(Device.self, id: id)
        case .ticketMessageCreated: return (try await queueMessage(id: id), false)
        case .clientCreated: return (try await queueCreate(.clients, id: id), true)
        case .orderCreated: return (try await queueCreate(.orders, id: id), true)
        case .deviceCreated: return (try await queueCreate(.devices, id: id), true)
        }
    }

    private func queueUpdate<R: EditableRecord>(_ type: R.Type, id: String) async throws -> (
        result: QueueResult, create: Bool
    ) {
        let now = clock.now()
        let cipher = cipher
        return try await store.groupCommit.write(reporting: true) { db in
            guard let record = try RecordState.read(R.self, id: id, db) else {
                throw EngineError.unknownRecord(collection: R.collection.name, id: id)
            }
            let stored = record.stored
            let entries = record.hasEntries ? try Outbox.entries(db, collection: R.collection, id: id) : []
            // A record created here has no server copy yet: its create is the base.
            guard let base = record.base?.fields ?? RecordRebase.createdValues(R.self, entries) else {
                // Inserted by another program and never queued: its creation is what there is to queue.
                if record.neverSynced {
                    let entry = try LocalChanges.queueCreateFromRow(R.collection, id: id, cipher: cipher, now: now, db)
                    return (.queued(seq: entry.seq, fields: entry.fields.keys.sorted()), entry.kind == .create)
                }
                throw EngineError.unknownRecord(collection: R.collection.name + " (server copy)", id: id)
            }
            let expected = base.overlaid(with: RecordRebase.overlay(entries).values)
            let changed = stored.filter { expected[$0.key] != $0.value }
            for case (let name, let value?) in changed { try Self.checkLength(name, value) }
            guard !changed.isEmpty else {
                let pending = stored.filter { base[$0.key] != $0.value }.keys.sorted()
                if let holding = entries.last(where: {
                    $0.kind == .update && $0.isLive && !$0.fields.keys.filter(pending.contains).isEmpty
                }) {
                    return (.alreadyQueued(seq: holding.seq, fields: pending), false)
                }
                // Created here and not acknowledged yet: the row is what its create holds, not a server copy.
                if record.base == nil, let create = entries.first(where: { $0.kind == .create }) {
                    guard create.isLive else {
                        let what = "\(R.collection.name) \(id)'s creation"
                        return (.nothingChanged(.dead(seq: create.seq), reason: Self.deadReason(what, create)), false)
                    }
                    return (.alreadyQueued(seq: create.seq, fields: create.fields.keys.sorted()), false)
                }
                return (.nothingChanged(.onServer, reason: "\(R.collection.name) \(id) is the server's copy"), false)
            }
            let entry = try Outbox.enqueueUpdate(
                db, collection: R.collection, id: id, fields: changed, now: now, entries: entries,
                openConflict: record.hasOpenConflict)
            return (.queued(seq: entry.seq, fields: changed.keys.sorted()), entry.kind == .create)
        }
    }

    private func queueMessage(id: String) async throws -> QueueResult {
        let now = clock.now()
        return try await store.groupCommit.write(reporting: true) { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT synced_at FROM ticket_messages WHERE id = ?", arguments: [id]),
                let message = try TicketMessage.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM ticket_messages WHERE id = ?"), arguments: [id])
            else {
                throw EngineError.unknownRecord(collection: "ticket_messages", id: id)
            }
            if (row["synced_at"] as String?) != nil {
                return .nothingChanged(.onServer, reason: "message \(id) came from the server")
            }
            if let queued = try Outbox.entries(db, collection: .ticketMessages, id: id).first {
                guard queued.isLive else {
                    return .nothingChanged(.dead(seq: queued.seq), reason: Self.deadReason("message \(id)", queued))
                }
                return .alreadyQueued(seq: queued.seq, fields: ["content", "is_internal"])
            }
            let entry = try Self.queueInsertedMessage(message, now: now, db)
            return .queued(seq: entry.seq, fields: ["content", "is_internal"])
        }
    }

    /// Queues a message row another program inserted (not from the server, not queued yet): by `queueChange`, or
    /// by the next run when the program never called it.
    @discardableResult
    static func queueInsertedMessage(_ message: TicketMessage, now: Timestamp, _ db: Database) throws -> OutboxEntry {
        try requireNewId(message.id)
        try checkLength("content", message.content)
        return try Outbox.enqueueMessage(db, message: message, now: now)
    }
}
