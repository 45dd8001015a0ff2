public import RepairSyncModels

/// Where a local change is in the outbox. Open: a state a newer daemon adds is kept as `unrecognized`.
public enum ChangeState: OpenEnum {
    /// Waiting for its turn, or being sent.
    case pending
    /// Being sent right now.
    case inFlight
    /// Failed transiently; retried at `nextAttemptAt`.
    case failed
    /// Given up on: visible, retryable (`retry`) or discardable (`discard`).
    case dead
    /// Waiting for a conflict decision.
    case held
    case unrecognized(String)

    public static let known: [ChangeState] = [.pending, .inFlight, .failed, .dead, .held]

    public var rawValue: String {
        switch self {
        case .pending: "pending"
        case .inFlight: "in_flight"
        case .failed: "failed"
        case .dead: "dead"
        case .held: "held"
        case .unrecognized(let raw): raw
        }
    }

    public var displayName: String { rawValue }
}

/// How a conflict ended (or that it waits). Open, like every status this daemon reports.
public enum ConflictOutcome: OpenEnum {
    case keptLocal, keptRemote, merged, awaitingDecision, deletedRemotely, discarded, historyRewound, serverOverrode
    case unrecognized(String)

    public static let known: [ConflictOutcome] = [
        .keptLocal, .keptRemote, .merged, .awaitingDecision, .deletedRemotely, .discarded, .historyRewound,
        .serverOverrode,
    ]

    public var rawValue: String {
        switch self {
        case .keptLocal: "kept_local"
        case .keptRemote: "kept_remote"
        case .merged: "merged"
        case .awaitingDecision: "awaiting_decision"
        case .deletedRemotely: "deleted_remotely"
        case .discarded: "discarded"
        case .historyRewound: "history_rewound"
        case .serverOverrode: "server_overrode"
        case .unrecognized(let raw): raw
        }
    }

    public var displayName: String { rawValue }
}

/// What the engine is doing, as `status` reports it.
public enum SyncState: OpenEnum {
    case idle, syncing, completed, error, offline
    case unrecognized(String)

    public static let known: [SyncState] = [.idle, .syncing, .completed, .error, .offline]

    public var rawValue: String {
        switch self {
        case .idle: "idle"
        case .syncing: "syncing"
        case .completed: "completed"
        case .error: "error"
        case .offline: "offline"
        case .unrecognized(let raw): raw
        }
    }

    public var displayName: String { rawValue }
}
