public import RepairSyncModels

/// Decides, for one record, which pending local fields survive a new server copy. Pure: no I/O, no clock.
public struct ConflictResolver: Sendable {
    public struct Input: Sendable {
        public var base: FieldValues
        public var baseVersion: Int
        public var remote: FieldValues
        public var remoteVersion: Int
        /// The server's `updated_at` of the remote copy (server clock).
        public var remoteUpdatedAt: Timestamp
        /// The pending local values, latest per field.
        public var local: FieldValues
        /// When each local field was last edited (local clock).
        public var localEditedAt: [String: Timestamp]
        public var policy: ConflictPolicy
        /// Local clock minus server clock, measured from the server's `Date` header.
        public var clockOffsetMilliseconds: Int64
        /// Per field, the values of local changes that are in doubt (sent, no final answer yet): a remote value equal
        /// to one of them may be this workstation's own write, so it is not taken for someone else's edit.
        public var inDoubt: [String: [String?]]

        public init(
            base: FieldValues, baseVersion: Int, remote: FieldValues, remoteVersion: Int, remoteUpdatedAt: Timestamp,
            local: FieldValues, localEditedAt: [String: Timestamp], policy: ConflictPolicy,
            clockOffsetMilliseconds: Int64, inDoubt: [String: [String?]] = [:]
        ) {
            self.inDoubt = inDoubt
            self.base = base
            self.baseVersion = baseVersion
            self.remote = remote
            self.remoteVersion = remoteVersion
            self.remoteUpdatedAt = remoteUpdatedAt
            self.local = local
            self.localEditedAt = localEditedAt
            self.policy = policy
            self.clockOffsetMilliseconds = clockOffsetMilliseconds
        }
    }

    public struct Result: Sendable, Equatable {
        /// Local fields still to push.
        public var keep: FieldValues
        /// Local fields dropped: the server already has these values, or its values won.
        public var drop: Set<String>
        /// Fields changed on both sides to different values.
        public var conflicting: [String]
        /// What to write to the audit log; nil when there was nothing to decide.
        public var outcome: ConflictRecord.Outcome?
        /// The fields the logged decision is about.
        public var decidedFields: [String]
    }

    public init() {}

    public func resolve(_ input: Input) -> Result {
        // A local value the server's copy already holds has nothing left to push — unless the copy is no newer than
        // the base while a write of ours sent against that base is in doubt with another value: the server may hold
        // that value now (a stale page, or a copy read before the write landed), and only the later edit restores it.
        let copyPredatesDoubts = input.remoteVersion == input.baseVersion
        let converged = Set(
            input.local.keys.filter { field in
                input.remote[field] == input.local[field]
                    && !(copyPredatesDoubts && (input.inDoubt[field] ?? []).contains { $0 != input.remote[field] })
            })
        let rest = input.local.filter { !converged.contains($0.key) }
        // Changed on the server since the base — by someone else: a value one of our own in-doubt writes would have
        // set is not evidence of another edit (docs/architecture.md, "In-doubt changes").
        let remoteChanged: Set<String> =
            input.remoteVersion == input.baseVersion
            ? []
            : Set(
                input.remote.keys.filter { field in
                    input.remote[field] != input.base[field]
                        && !(input.inDoubt[field] ?? []).contains { $0 == input.remote[field] }
                })
        let conflicting = rest.keys.filter { remoteChanged.contains($0) }.sorted()
        var result = Result(keep: rest, drop: converged, conflicting: conflicting, outcome: nil, decidedFields: [])
        guard !rest.isEmpty, !remoteChanged.isEmpty else { return result }

        // The remote write time on the local clock, so that a skewed workstation clock does not decide.
        let remoteWrite = input.remoteUpdatedAt.adding(milliseconds: input.clockOffsetMilliseconds)
        let latestLocal = rest.keys.compactMap { input.localEditedAt[$0] }.max() ?? Timestamp(millisecondsSince1970: 0)
        func localIsNewer(_ field: String) -> Bool {
            (input.localEditedAt[field] ?? Timestamp(millisecondsSince1970: 0)) >= remoteWrite
        }
        func dropAll() {
            result.drop.formUnion(rest.keys)
            result.keep = [:]
        }

        switch input.policy {
        case .clientWins:
            result.outcome = .keptLocal
            result.decidedFields = conflicting.isEmpty ? rest.keys.sorted() : conflicting
        case .serverWins:
            dropAll()
            result.outcome = .keptRemote
            result.decidedFields = rest.keys.sorted()
        case .lastWriteWins:
            if latestLocal >= remoteWrite {
                result.outcome = .keptLocal
            } else {
                dropAll()
                result.outcome = .keptRemote
            }
            result.decidedFields = rest.keys.sorted()
        case .merge:
            guard !conflicting.isEmpty else { return result }
            let lost = conflicting.filter { !localIsNewer($0) }
            for field in lost { result.keep[field] = nil }
            result.drop.formUnion(lost)
            result.outcome = lost.isEmpty ? .keptLocal : lost.count == conflicting.count ? .keptRemote : .merged
            result.decidedFields = conflicting
        case .manual:
            guard !conflicting.isEmpty else { return result }
            result.outcome = .awaitingDecision
            result.decidedFields = conflicting
        }
        return result
    }
}
