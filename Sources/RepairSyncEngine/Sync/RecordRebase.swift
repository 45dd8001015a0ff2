internal import GRDB
internal import RepairSyncModels
internal import RepairSyncStore

/// Applies a server copy of an editable record to the replica without losing a local change: the one place where
/// the local row, its base copy and its outbox entries are reconciled. Used by pull, by a 412 reply and by a
/// successful PATCH, always inside the caller's transaction.
///
/// Invariant after every call: row = server copy ⊕ pending local fields ⊕ edits not yet queued.
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

    static func overlay(_ entries: [OutboxEntry]) -> (values: FieldValues, editedAt: [String: Timestamp]) {
        var values: FieldValues = [:]
        var editedAt: [String: Timestamp] = [:]
        for entry in entries where entry.kind == .update {
            for (field, value) in entry.fields {
                values[field] = value
                editedAt[field] = entry.editedAt
            }
        }
        return (values, editedAt)
    }

    /// Takes `remote` (from a changes page or a 412) for a record that may have pending changes.
    ///
    /// - Parameter mayHaveEntries: false when the caller knows the record has no outbox entry (a page checks all its
    ///   records in one query), which saves a query per record.
    @discardableResult
    func apply<R: EditableRecord>(_ remote: R, _ db: Database, mayHaveEntries: Bool = true) throws -> Outcome {
        let base = try BaseCopies.load(db, collection: R.collection, id: remote.id)
        if let base, base.version > remote.version {
            // An older copy than the one already taken (e.g. a replayed response): nothing to learn from it.
            return Outcome()
        }
        // Without a base copy there is no local row to keep edits of (rows come with their base).
        let row = base == nil ? nil : try R.storedEditableValues(id: remote.id, db)
        let entries =
            mayHaveEntries
            ? try Outbox.entries(db, collection: R.collection, id: remote.id).filter { $0.kind == .update } : []
        let (pending, editedAt) = Self.overlay(entries)
        let unqueued = Self.unqueuedEdits(row: row, base: base, pending: pending)
        var outcome = Outcome()
        var remaining = entries

        if !entries.isEmpty {
            let baseCopy = base ?? BaseCopy(version: remote.version, fields: remote.editableValues)
            if let open = try ConflictLog.open(db, collection: R.collection, id: remote.id) {
                // Waiting for a person: keep the entries held, show the decision the latest remote values.
                try db.execute(
                    sql: "UPDATE conflicts SET remote = ?, remote_version = ? WHERE id = ?",
                    arguments: [FieldValuesJSON.encode(remote.editableValues), remote.version, open.id])
                for entry in entries where entry.attempts > 0 {
                    try Outbox.rewrite(db, entry, fields: entry.fields)
                }
            } else {
                let result = resolver.resolve(
                    .init(
                        base: baseCopy.fields, baseVersion: baseCopy.version, remote: remote.editableValues,
                        remoteVersion: remote.version, remoteUpdatedAt: remote.updatedAt, local: pending,
                        localEditedAt: editedAt, policy: policy, clockOffsetMilliseconds: clockOffsetMilliseconds))
                remaining = []
                let rebased = remote.version != baseCopy.version
                for entry in entries {
                    let fields = entry.fields.filter { !result.drop.contains($0.key) }
                    if fields.isEmpty {
                        try Outbox.remove(db, seq: entry.seq)
                        continue
                    }
                    var updated = entry
                    updated.fields = fields
                    let hold = result.outcome == .awaitingDecision
                    if fields != entry.fields || hold || (rebased && (entry.attempts > 0 || entry.state == .inFlight)) {
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
        newRow.apply(unqueued)
        try newRow.protectingSecrets(cipher).upsert(db, syncedAt: now)
        try BaseCopies.save(db, remote)
        return outcome
    }

    /// A PATCH of `entry` succeeded with `response`: the entry is done and the response is the new base. Changes
    /// queued or written while the request was in flight stay on top of it.
    func acknowledge<R: EditableRecord>(_ entry: OutboxEntry, response: R, _ db: Database) throws {
        let base = try BaseCopies.load(db, collection: R.collection, id: response.id)
        let row = try R.storedEditableValues(id: response.id, db)
        let entries = try Outbox.entries(db, collection: R.collection, id: response.id).filter { $0.kind == .update }
        let unqueued = Self.unqueuedEdits(row: row, base: base, pending: Self.overlay(entries).values)
        try Outbox.remove(db, seq: entry.seq)
        let remaining = entries.filter { $0.seq != entry.seq }
        guard base.map({ response.version >= $0.version }) ?? true else { return }
        var newRow = response
        newRow.apply(Self.overlay(remaining).values)
        newRow.apply(unqueued)
        try newRow.protectingSecrets(cipher).upsert(db, syncedAt: now)
        try BaseCopies.save(db, response)
    }

    /// The server no longer has the record (tombstone or 404). Pending local values go to the audit log, then
    /// the row, its children and its entries go.
    static func deletedRemotely(
        _ db: Database, collection: SyncCollection, id: String, policy: String, now: Timestamp
    ) throws {
        let entries = try Outbox.entries(db, collection: collection, id: id)
        if !entries.isEmpty {
            let base = try BaseCopies.load(db, collection: collection, id: id)
            var local: FieldValues = [:]
            for entry in entries { local = local.overlaid(with: entry.fields) }
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
    }
}
