internal import GRDB
internal import RepairSyncModels
internal import RepairSyncStore

/// Applies a server copy of an editable record to the replica without losing a local change: the one place where
/// the local row, its base copy and its outbox entries are reconciled. Used by pull, by a 412 reply, by a successful
/// PATCH, and when an entry dies, is retried or discarded — always inside the caller's transaction.
///
/// Invariant after every call: row = base ⊕ live local fields (dead entries' values are not shown), and every edit
/// another program wrote into the row is queued (a pull that finds one queues it before resolving, so it is judged
/// by policy like any local change, never silently kept over a remote change nor silently overwritten).
struct RecordRebase {
    let policy: ConflictPolicy
    let clockOffsetMilliseconds: Int64
    let now: Timestamp
    var cipher: PasscodeCipher? = nil
    let resolver = ConflictResolver()

    struct Outcome {
        var conflict: ConflictRecord.Outcome?
    }

    /// Local values that differ from base ⊕ pending fields: written by another program and not queued (yet).
    static func unqueuedEdits(row: FieldValues?, base: BaseCopy?, pending: FieldValues) -> FieldValues {
        guard let row, let base else { return [:] }
        let expected = base.fields.overlaid(with: pending)
        return row.filter { expected[$0.key] != $0.value }
    }

    /// The values the record shows on top of its base: the live update entries' fields, latest last, and when
    /// each field was edited. Dead entries are left out: the server refused (or was given up on) them.
    static func overlay(_ entries: [OutboxEntry]) -> (values: FieldValues, editedAt: [String: Timestamp]) {
        var values: FieldValues = [:]
        var editedAt: [String: Timestamp] = [:]
        for entry in entries where entry.kind == .update && entry.isLive {
            for (field, value) in entry.fields {
                values[field] = value
                editedAt[field] = entry.editedAt
            }
        }
        return (values, editedAt)
    }

    /// Per field, the values this workstation may have written already: those of entries in doubt (dead or not).
    static func inDoubtValues(_ entries: [OutboxEntry]) -> [String: [String?]] {
        var values: [String: [String?]] = [:]
        for entry in entries where entry.kind == .update && entry.sent {
            for (field, value) in entry.fields { values[field, default: []].append(value) }
        }
        return values
    }

    /// The editable values of a record created here, as its create entry holds them (nil: no create entry): the
    /// base its row is diffed against until the server's copy is.
    static func createdValues<R: EditableRecord>(_ type: R.Type, _ entries: [OutboxEntry]) -> FieldValues? {
        guard let create = entries.first(where: { $0.kind == .create }) else { return nil }
        var values: FieldValues = [:]
        for field in R.editableFields { values[field] = .some(create.fields[field] ?? nil) }
        return values
    }

    /// Queues what other programs wrote into rows and never queued: the rows the triggers noted (`edited_rows`),
    /// at most `limit` of them; their notes go. A row another program inserted (clients, orders, devices not from
    /// the server) gets its creation queued, parent first; one the server would refuse stays unqueued and is named
    /// in `refused` (its `queueChange` gives the reason). Returns how many rows were looked at and how many had such
    /// an edit.
    func queueEditedRows(limit: Int, _ db: Database) throws -> (looked: Int, queued: Int, refused: [String]) {
        let rows = try Row.fetchAll(
            db, sql: "SELECT collection, record_id FROM edited_rows ORDER BY collection, record_id LIMIT ?",
            arguments: [limit])
        var queued = 0
        var refused: [String] = []
        for row in rows {
            let id: String = row["record_id"]
            let collection = SyncCollection(rawValue: row["collection"]) ?? .orders
            let before = try Outbox.entries(db, collection: collection, id: id)
            if collection != .tickets, !before.contains(where: { $0.kind == .create }),
                try String?.fetchOne(db, sql: "SELECT synced_at FROM \(collection.name) WHERE id = ?", arguments: [id])
                    == .some(nil)
            {
                do {
                    try db.inSavepoint {
                        if collection == .ticketMessages {
                            // A message row inserted and never queued (its program died before `queueChange`).
                            if let message = try TicketMessage.fetchOne(db, key: id) {
                                try LocalChanges.queueInsertedMessage(message, now: now, db)
                            }
                        } else {
                            try LocalChanges.queueCreateFromRow(collection, id: id, cipher: cipher, now: now, db)
                        }
                        return .commit
                    }
                } catch let error as EngineError {
                    refused.append("\(collection.name) \(id): \(error)")
                }
            }
            func leftOut(_ field: String) {
                refused.append(
                    "\(collection.name) \(id): \(field) is longer than \(NewRecordShape.maximumTextLength) characters; not queued"
                )
            }
            switch collection {
            case .orders:
                let base = try BaseCopies.load(db, collection: .orders, id: id)
                _ = try queueUnqueuedEdits(
                    Order.self, id: id, base: base, entries: before.filter { $0.kind == .update }, db,
                    leavingOut: leftOut)
            case .devices:
                let base = try BaseCopies.load(db, collection: .devices, id: id)
                _ = try queueUnqueuedEdits(
                    Device.self, id: id, base: base, entries: before.filter { $0.kind == .update }, db,
                    leavingOut: leftOut)
            default: break
            }
            if try Outbox.entries(db, collection: SyncCollection(rawValue: row["collection"]) ?? .orders, id: id)
                != before
            {
                queued += 1
            }
            try db.execute(
                sql: "DELETE FROM edited_rows WHERE collection = ? AND record_id = ?",
                arguments: [row["collection"], id])
        }
        return (rows.count, queued, refused)
    }

    /// Queues what another program wrote into the row and did not queue, and returns the record's update entries
    /// (re-read when something was queued). A field holding a text the server would refuse is never queued (it would
    /// only go dead): it is handed to `leavingOut`, and the row shows it until the record is rendered again.
    private func queueUnqueuedEdits<R: EditableRecord>(
        _ type: R.Type, id: String, base: BaseCopy?, entries: [OutboxEntry], _ db: Database,
        leavingOut: (String) -> Void = { _ in }
    ) throws -> [OutboxEntry] {
        var base = base
        if base == nil,
            let created = Self.createdValues(R.self, try Outbox.entries(db, collection: R.collection, id: id))
        {
            // Created here, not on the server yet: the create is what the row is diffed against.
            base = BaseCopy(version: 0, fields: created)
        }
        guard let base, let row = try R.storedEditableValues(id: id, db) else { return entries }
        var unqueued = Self.unqueuedEdits(row: row, base: base, pending: Self.overlay(entries).values)
        for case (let field, let text?) in unqueued where NewRecordShape.isTooLong(text) {
            unqueued[field] = nil
            leavingOut(field)
        }
        guard !unqueued.isEmpty else { return entries }
        try Outbox.enqueueUpdate(db, collection: R.collection, id: id, fields: unqueued, now: now)
        return try Outbox.entries(db, collection: R.collection, id: id).filter { $0.kind == .update }
    }

    /// Takes `remote` (from a changes page or a 412) for a record that may have pending changes. A copy older than
    /// the base is ignored (a replayed or stale answer); a server whose history went back is `adoptRewound`'s case.
    ///
    /// - Parameter mayHaveEntries: false when the caller knows the record has no outbox entry (a page checks all its
    ///   records in one query), which saves a query per record.
    @discardableResult
    func apply<R: EditableRecord>(_ remote: R, _ db: Database, mayHaveEntries: Bool = true) throws -> Outcome {
        let base = try BaseCopies.load(db, collection: R.collection, id: remote.id)
        if let base, base.version > remote.version { return Outcome() }
        var entries =
            mayHaveEntries
            ? try Outbox.entries(db, collection: R.collection, id: remote.id).filter { $0.kind == .update } : []
        entries = try queueUnqueuedEdits(R.self, id: remote.id, base: base, entries: entries, db)
        let live = entries.filter(\.isLive)
        let (pending, editedAt) = Self.overlay(live)
        var outcome = Outcome()
        var remaining = live

        if !live.isEmpty {
            let baseCopy = base ?? BaseCopy(version: remote.version, fields: remote.editableValues)
            if let open = try ConflictLog.open(db, collection: R.collection, id: remote.id) {
                // Waiting for a person: keep the entries held, show the decision the latest remote values.
                try db.execute(
                    sql: "UPDATE conflicts SET remote = ?, remote_version = ? WHERE id = ?",
                    arguments: [FieldValuesJSON.encode(remote.editableValues), remote.version, open.id])
                for entry in live where entry.sent {
                    try Outbox.rewrite(db, entry, fields: entry.fields)
                }
            } else {
                // Queueing another program's edit may have replaced an entry in doubt just now: its values joined the
                // base's evidence of our own writes after `base` was read (seed 9409).
                let goneInDoubt = try BaseCopies.load(db, collection: R.collection, id: remote.id)?.goneInDoubt ?? [:]
                let result = resolver.resolve(
                    .init(
                        base: baseCopy.fields, baseVersion: baseCopy.version, remote: remote.editableValues,
                        remoteVersion: remote.version, remoteUpdatedAt: remote.updatedAt, local: pending,
                        localEditedAt: editedAt, policy: policy, clockOffsetMilliseconds: clockOffsetMilliseconds,
                        inDoubt: Self.inDoubtValues(entries).merging(goneInDoubt) { $0 + $1 }))
                remaining = []
                let rebased = remote.version != baseCopy.version
                for entry in live {
                    let fields = entry.fields.filter { !result.drop.contains($0.key) }
                    if fields.isEmpty {
                        try Outbox.remove(db, seq: entry.seq)
                        continue
                    }
                    var updated = entry
                    updated.fields = fields
                    let hold = result.outcome == .awaitingDecision
                    if fields != entry.fields || hold || (rebased && (entry.sent || entry.state == .inFlight)) {
                        try Outbox.rewrite(db, entry, fields: fields, state: hold ? .held : nil)
                    }
                    remaining.append(updated)
                }
                if let decision = result.outcome {
                    try ConflictLog.record(
                        db, collection: R.collection, id: remote.id, fields: result.decidedFields,
                        base: baseCopy.fields, local: pending, remote: remote.editableValues,
                        remoteVersion: remote.version, policy: policy.rawValue, outcome: decision, now: now)
                    outcome.conflict = decision
                }
            }
        }

        var newRow = remote
        newRow.apply(Self.overlay(remaining).values)
        try newRow.protectingSecrets(cipher).upsert(db, syncedAt: now)
        try BaseCopies.save(db, remote)
        return outcome
    }

    /// The server's copy is older than the base although it is the server's current record (its history went back:
    /// restored from a backup, or deleted and created again under the same id). It becomes the new base; pending
    /// changes stay on top and go out as new requests (new keys) against it; the audit log records the rewind.
    func adoptRewound<R: EditableRecord>(_ remote: R, _ db: Database) throws {
        let base = try BaseCopies.load(db, collection: R.collection, id: remote.id)
        var entries = try Outbox.entries(db, collection: R.collection, id: remote.id).filter { $0.kind == .update }
        entries = try queueUnqueuedEdits(R.self, id: remote.id, base: base, entries: entries, db)
        for entry in entries where entry.sent || entry.state == .inFlight {
            try Outbox.rewrite(db, entry, fields: entry.fields)
        }
        let pending = Self.overlay(entries).values
        let oldFields = base?.fields ?? [:]
        try ConflictLog.record(
            db, collection: R.collection, id: remote.id,
            fields: remote.editableValues.keys.filter { oldFields[$0] != remote.editableValues[$0] },
            base: oldFields.merging(["version": base.map { "\($0.version)" }]) { $1 }, local: pending,
            remote: remote.editableValues.merging(["version": "\(remote.version)"]) { $1 },
            remoteVersion: remote.version, policy: policy.rawValue, outcome: .historyRewound, now: now)
        var newRow = remote
        newRow.apply(pending)
        try newRow.protectingSecrets(cipher).upsert(db, syncedAt: now)
        try BaseCopies.save(db, remote)
    }

    /// A record without local changes whose server copy went back: taken as it is, with an audit-log entry.
    func adoptRewound<R: ReplicaRecord>(plain remote: R, previousVersion: Int, _ db: Database) throws {
        try ConflictLog.record(
            db, collection: R.collection, id: remote.id, fields: [], base: ["version": "\(previousVersion)"],
            local: [:], remote: ["version": "\(remote.version)"], remoteVersion: remote.version,
            policy: policy.rawValue, outcome: .historyRewound, now: now)
        try remote.upsert(db, syncedAt: now)
    }

    /// A PATCH of `entry` succeeded with `response`: the entry is done and the response is the new base. Changes
    /// queued or written while the request was in flight stay on top of it. The If-Match of the PATCH guarantees
    /// that the response is the base plus this change (nothing to resolve); a response older than the base (a
    /// replay answered after a pull brought a newer copy) teaches nothing.
    ///
    /// A response that does not hold a value the change sent (a server rule that rewrote it, or a server that
    /// answers success without applying the write) is still the server's word: its copy is taken, and the values
    /// sent go to the audit log as `server_overrode`, so the edit is not lost without a trace. Returns the fields
    /// the server did not keep.
    @discardableResult
    func acknowledge<R: EditableRecord>(_ entry: OutboxEntry, response: R, _ db: Database) throws -> [String] {
        let base = try BaseCopies.load(db, collection: R.collection, id: response.id)
        let notKept = Self.fieldsNotKept(sent: entry.fields, by: response)
        if !notKept.isEmpty {
            try ConflictLog.record(
                db, collection: R.collection, id: response.id, fields: notKept,
                base: (base?.fields ?? [:]).merging(["version": base.map { "\($0.version)" }]) { $1 },
                local: entry.fields.filter { notKept.contains($0.key) },
                remote: response.editableValues.merging(["version": "\(response.version)"]) { $1 },
                remoteVersion: response.version, policy: policy.rawValue, outcome: .serverOverrode, now: now)
        }
        var entries = try Outbox.entries(db, collection: R.collection, id: response.id).filter { $0.kind == .update }
        entries = try queueUnqueuedEdits(R.self, id: response.id, base: base, entries: entries, db)
        try Outbox.remove(db, seq: entry.seq)
        let remaining = entries.filter { $0.seq != entry.seq && $0.isLive }
        if let base, response.version < base.version {
            // The answer teaches nothing, but the row stops showing this entry over the base: base ⊕ what is live.
            try Self.show(R.self, id: response.id, base: base, live: remaining, db)
            return notKept
        }
        var newRow = response
        newRow.apply(Self.overlay(remaining).values)
        try newRow.protectingSecrets(cipher).upsert(db, syncedAt: now)
        try BaseCopies.save(db, response)
        return notKept
    }

    /// The editable fields `sent` sets that `response` holds another value for, sorted.
    static func fieldsNotKept<R: EditableRecord>(sent: FieldValues, by response: R) -> [String] {
        let answered = response.editableValues
        return sent.keys.filter { field in
            guard let value = answered[field] else { return false }
            return value != (sent[field] ?? nil)
        }.sorted()
    }

    /// The server created a record that was created here (`entry`, its create) and answered with it: the entry is
    /// done, the reply is the record's first server copy — its number, its derived fields — and the new base; edits
    /// made since the create was sent stay on top (and one another program wrote into the row meanwhile is queued
    /// first). A reply older than what the replica took since (a replay after a pull) teaches nothing.
    ///
    /// `asCreated`: the answer is the record as the create made it (a `201`, first or replayed). A `200` is the record
    /// as it is now (docs/api.md 4.7: the create was applied before, its key forgotten), which may carry another
    /// user's edits since: edits made here after the create was sent are then judged against it by the policy
    /// (`saveCreatedBase`), not laid over it.
    func acknowledgeCreate<R: EditableRecord>(_ entry: OutboxEntry, response: R, asCreated: Bool = true, _ db: Database)
        throws
    {
        _ = try queueUnqueuedEdits(
            R.self, id: response.id, base: nil,
            entries: try Outbox.entries(db, collection: R.collection, id: response.id).filter { $0.kind == .update }, db
        )
        if !asCreated { try saveCreatedBase(entry, copy: response, db) }
        try Outbox.remove(db, seq: entry.seq)
        try Outbox.unblock(db, key: entry.orderKey)
        try Self.markForSweep(R.collection, id: response.id, db)
        if !asCreated {
            try apply(response, db)
            return
        }
        let remaining = try Outbox.entries(db, collection: R.collection, id: response.id).filter {
            $0.kind == .update && $0.isLive
        }
        if let base = try BaseCopies.load(db, collection: R.collection, id: response.id),
            base.version > response.version
        {
            return
        }
        var newRow = response
        newRow.apply(Self.overlay(remaining).values)
        try newRow.protectingSecrets(cipher).upsert(db, syncedAt: now)
        try BaseCopies.save(db, response)
    }

    /// Records created here that the server shows (a changes page): each one's create is settled — the server has
    /// the record, as a replay of its key would have told — after any edit another program wrote into its row is
    /// queued, so that the server's copy taken next loses nothing.
    ///
    /// A create that is not in doubt (refused, since: edits made after that went into its body) can still be the
    /// server's record: an earlier key of it was applied on a history the server went back to (restored from a
    /// backup that has it). Its id is this workstation's own (a UUID made here), so the record is ours; what the
    /// create holds becomes an update on top of the server's copy (fields the copy already has are dropped by the
    /// rebase that follows), and what waited for the create goes. Returns how many creates it settled.
    func settleCreates<R: EditableRecord>(_ records: [R], _ db: Database) throws -> Int {
        var count = 0
        for record in records {
            let id = record.id
            let entries = try Outbox.entries(db, collection: R.collection, id: id)
            guard entries.contains(where: { $0.kind == .create }) else { continue }
            _ = try queueUnqueuedEdits(R.self, id: id, base: nil, entries: entries.filter { $0.kind == .update }, db)
            guard let create = try Outbox.createEntry(db, collection: R.collection, id: id) else { continue }
            if create.sent {
                try saveCreatedBase(create, copy: record, db)
                count += try Outbox.settleCreates(db, collection: R.collection, ids: [id])
                continue
            }
            try Outbox.remove(db, seq: create.seq)
            let values = create.fields.filter { R.editableFields.contains($0.key) }
            if !values.isEmpty {
                try Outbox.enqueueUpdate(db, collection: R.collection, id: id, fields: values, now: now)
            }
            try Outbox.unblock(db, key: create.orderKey)
            count += 1
        }
        return count
    }

    /// The base of a record created here whose create the server has, before the server's copy of it is taken — a
    /// copy that is the record as it is now (a page, a `200` to a create whose key was forgotten), not as created:
    /// edits made here after the create was sent were made on top of what the create asked for, so that is what the
    /// copy is compared with. Without it the copy was its own base: another user's edit since looked like no change,
    /// and a local edit of the same field overwrote it with no conflict judged (found by review). The fields the
    /// create did not name are the server's defaults, taken from the copy (no evidence of another edit). Version 0:
    /// older than any copy. Nothing when the record has a base already.
    private func saveCreatedBase<R: EditableRecord>(_ create: OutboxEntry, copy: R, _ db: Database) throws {
        guard try BaseCopies.load(db, collection: R.collection, id: copy.id) == nil else { return }
        var fields = copy.editableValues
        for (field, value) in create.fields where R.editableFields.contains(field) { fields[field] = value }
        try BaseCopies.save(db, collection: R.collection, id: copy.id, BaseCopy(version: 0, fields: fields))
    }

    /// A record the server created while its collection is being pulled again from the beginning (marked, to be
    /// swept) is marked too: it was not in the replica when the marks were set, and if the server loses it before the
    /// pull ends (restored from a backup), the sweep checks it like the others instead of keeping a ghost.
    static func markForSweep(_ collection: SyncCollection, id: String, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO resync_marks (collection, record_id)
                SELECT ?, ? WHERE EXISTS (SELECT 1 FROM resync_marks WHERE collection = ?)
                """, arguments: [collection.name, id, collection.name])
    }

    /// The same for a record without local edits (a client): the reply becomes the row.
    func acknowledgeCreate<R: ReplicaRecord>(_ entry: OutboxEntry, plain response: R, _ db: Database) throws {
        try Outbox.remove(db, seq: entry.seq)
        try Outbox.unblock(db, key: entry.orderKey)
        try Self.markForSweep(R.collection, id: response.id, db)
        if let local = try Puller.localVersions(R.self, ids: [response.id], db)[response.id], local > response.version {
            return
        }
        try response.upsert(db, syncedAt: now)
    }

    /// Writes the record's editable columns as base ⊕ live entries, after an entry died, was retried or discarded.
    /// Edits another program wrote and did not queue are queued first, so they stay.
    func render<R: EditableRecord>(_ type: R.Type, id: String, _ db: Database, changing: () throws -> Void) throws {
        guard let base = try BaseCopies.load(db, collection: R.collection, id: id) else {
            try changing()
            return
        }
        let entries = try Outbox.entries(db, collection: R.collection, id: id).filter { $0.kind == .update }
        _ = try queueUnqueuedEdits(R.self, id: id, base: base, entries: entries, db)
        try changing()
        let live = try Outbox.entries(db, collection: R.collection, id: id).filter { $0.kind == .update }
        try Self.show(R.self, id: id, base: base, live: live, db)
    }

    /// Writes the row's editable columns as `base` ⊕ the live update entries among `live`.
    private static func show<R: EditableRecord>(
        _ type: R.Type, id: String, base: BaseCopy, live: [OutboxEntry], _ db: Database
    ) throws {
        let values = base.fields.overlaid(with: overlay(live).values)
        let names = R.editableFields
        try db.execute(
            sql: "UPDATE \(R.collection.name) SET \(names.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?",
            arguments: StatementArguments(names.map { values[$0] ?? nil } + [id]))
    }

    /// The server no longer has the record (tombstone, 404, or missing from a resync). Pending local values go to
    /// the audit log, then the row, its children and its entries go. Returns whether local values went to the log.
    @discardableResult
    static func deletedRemotely(
        _ db: Database, collection: SyncCollection, id: String, policy: String, now: Timestamp
    ) throws -> Bool {
        let entries = try Outbox.entries(db, collection: collection, id: id)
        let row = try Self.storedEditableValues(collection, id: id, db)
        let base = entries.isEmpty && row == nil ? nil : try BaseCopies.load(db, collection: collection, id: id)
        var local: FieldValues = [:]
        for entry in entries { local = local.overlaid(with: entry.fields) }
        // Another program's edit of the row, not queued yet, goes with the record too, and is told the same way
        // (simulator seed 1568: a counter tool's edit of a device whose order another user deleted vanished untold).
        // Against the row as shown (base ⊕ live changes): a dead change is no longer in it.
        local = local.overlaid(with: Self.unqueuedEdits(row: row, base: base, pending: Self.overlay(entries).values))
        if !local.isEmpty {
            try ConflictLog.record(
                db, collection: collection, id: id, fields: local.keys.sorted(), base: base?.fields ?? [:],
                local: local, remote: [:], remoteVersion: nil, policy: policy, outcome: .deletedRemotely, now: now)
            // Any open decision about this record is moot now.
            try db.execute(
                sql: """
                    UPDATE conflicts SET state = 'resolved', resolved_at = ? WHERE state = 'open' AND collection = ?
                    AND record_id = ?
                    """, arguments: [now.millisecondsSince1970, collection.name, id])
            try Outbox.removeAll(db, collection: collection, id: id)
        }
        try db.execute(sql: "DELETE FROM \(collection.name) WHERE id = ?", arguments: [id])
        return !local.isEmpty
    }

    /// The row's editable values, for the collections a person edits here (nil for the others, and for no row).
    private static func storedEditableValues(_ collection: SyncCollection, id: String, _ db: Database) throws
        -> FieldValues?
    {
        switch collection {
        case .orders: try Order.storedEditableValues(id: id, db)
        case .devices: try Device.storedEditableValues(id: id, db)
        case .clients, .tickets, .ticketMessages: nil
        }
    }

    /// Deletes a record the server deleted (a tombstone, a sweep's 404, or a 404 to a change of it), and its
    /// children that were created here and are not on the server (a device booked in on an order another user
    /// deleted): they never can be. Pending changes of any of them go to the conflict log first. A child the server
    /// has stays: it goes by its own tombstone (the server sends one for each record a deletion takes with it), so
    /// that a parent that leaves the replica for a moment does not take children nothing would bring back.
    /// Returns how many pending records were affected.
    static func deleteWithPendingChildren(
        _ collection: SyncCollection, id: String, policy: String, now: Timestamp, _ db: Database
    ) throws -> Int {
        // A client's orders booked in here and not created on the server yet (each with its devices): they never can
        // be. (The server keeps a deleted client's orders: those it has stay.) An order's devices, a ticket's messages
        // likewise.
        var affected = 0
        for (childCollection, childId) in try Outbox.queuedChildren(db, of: collection, id: id) {
            affected += try deleteWithPendingChildren(childCollection, id: childId, policy: policy, now: now, db)
        }
        let logged = try deletedRemotely(db, collection: collection, id: id, policy: policy, now: now)
        return affected + (logged ? 1 : 0)
    }
}
