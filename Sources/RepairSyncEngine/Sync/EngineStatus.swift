public import RepairSyncModels

/// What the engine is doing and how sync has been going: the source of `repairctl status` and the badge.
public struct EngineStatus: Sendable, Hashable, Codable {
    public enum Phase: Sendable, Hashable, Codable {
        case idle
        case syncing(step: Step, progress: Double)
        /// A run just succeeded; back to idle by itself after a moment.
        case completed
        case error(String)
        /// The API cannot be reached; nothing is attempted until it can.
        case offline

        public var name: String {
            switch self {
            case .idle: "idle"
            case .syncing: "syncing"
            case .completed: "completed"
            case .error: "error"
            case .offline: "offline"
            }
        }
    }

    public enum Step: String, Sendable, Hashable, Codable {
        case pushing
        case pulling
        case dashboard
    }

    public struct CollectionStatus: Sendable, Hashable, Codable {
        public var collection: SyncCollection
        public var state: SyncMetadata.State
        public var hasCursor: Bool
        public var lastSyncedAt: Timestamp?
        public var lastSuccessAt: Timestamp?
        public var lastError: String?
        public var records: Int
    }

    public struct Metrics: Sendable, Hashable, Codable {
        public var runs = 0
        public var successes = 0
        public var failures = 0
        public var lastDurationMilliseconds: Int64?
        public var totalDurationMilliseconds: Int64 = 0
        public var averageDurationMilliseconds: Int64? { runs == 0 ? nil : totalDurationMilliseconds / Int64(runs) }
        public var conflictsByOutcome: [String: Int] = [:]
    }

    public var phase: Phase = .idle
    public var lastSyncAt: Timestamp?
    public var lastSuccessAt: Timestamp?
    public var pending = 0
    public var failed = 0
    public var dead = 0
    public var held = 0
    public var openConflicts = 0
    public var collections: [CollectionStatus] = []
    public var metrics = Metrics()
    /// Local clock minus server clock, as last measured.
    public var clockOffsetMilliseconds: Int64 = 0
    /// The link to the API as last measured (nil until an answer was timed).
    public var link: LinkQuality?

    public init() {}
}
