public import RepairSyncModels

/// The `status` result and the params of every `statusChanged` notification: what the engine is doing, the network,
/// the schedule, the counts, each collection, and how sync has been going. `repairctl status`, the badge and any
/// status bar read this shape (docs/rpc.md).
///
/// A member without a value is present as `null`, except `step` and `progress` (only while syncing) and `message`
/// (only on error).
public struct StatusSnapshot: Codable, Sendable, Hashable {
    public var state: SyncState
    /// `pushing`, `pulling` or `dashboard`, while syncing.
    public var step: String?
    /// 0…1, while syncing.
    public var progress: Thousandths?
    /// What went wrong, on error.
    public var message: String?
    /// The connectivity probe's verdict.
    public var online: Bool
    /// `netlink` or `poll`.
    public var probe: String
    public var lastOnlineChange: Timestamp?
    public var paused: Bool
    /// The next planned run; nil while offline, or paused with nothing asked.
    public var nextRun: NextRun?
    public var lastSyncAt: Timestamp?
    public var lastSuccessAt: Timestamp?
    public var pending: Int
    public var failed: Int
    public var dead: Int
    public var held: Int
    public var openConflicts: Int
    /// The workstation's clock minus the server's, as last measured.
    public var clockOffsetMs: Int64
    public var collections: [CollectionState]
    /// The replica and its WAL on disk.
    public var storeBytes: Int64
    /// What the last retention pass removed (nil: none ran).
    public var retention: Retention?
    public var metrics: Metrics
    /// The server's change stream: `connected`, `connecting`, `unavailable` (the server has none: periodic sync
    /// only) or `off` (`sync.events: false`). Absent from daemons before it.
    public var events: String?
    /// Since when `events` holds.
    public var eventsSince: Timestamp?
    /// The link to the API as last measured; nil until an answer was timed.
    public var link: Link?

    /// The link's round trip, throughput and verdict (docs/operations.md, "Link quality").
    public struct Link: Codable, Sendable, Hashable {
        /// The path's round trip in milliseconds.
        public var rttMs: Int64?
        /// Answer bytes per second on the wire, smoothed; nil until a large enough answer arrived.
        public var throughputBytesPerSecond: Int64?
        /// `good` or `slow`.
        public var quality: String
        /// The records per changes page asked for last (smaller than configured on a slow link).
        public var pageSize: Int?

        public init(rttMs: Int64?, throughputBytesPerSecond: Int64?, quality: String, pageSize: Int?) {
            self.rttMs = rttMs
            self.throughputBytesPerSecond = throughputBytesPerSecond
            self.quality = quality
            self.pageSize = pageSize
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(rttMs, forKey: .rttMs)
            try c.encode(throughputBytesPerSecond, forKey: .throughputBytesPerSecond)
            try c.encode(quality, forKey: .quality)
            try c.encode(pageSize, forKey: .pageSize)
        }
    }

    public struct NextRun: Codable, Sendable, Hashable {
        public var at: Timestamp
        /// `startup`, `periodic`, `retry`, `reconnect`, `manual`, `local-change`, `change-retry`.
        public var reason: String?

        public init(at: Timestamp, reason: String?) {
            self.at = at
            self.reason = reason
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(at, forKey: .at)
            try c.encode(reason, forKey: .reason)
        }
    }

    public struct CollectionState: Codable, Sendable, Hashable {
        public var collection: String
        /// `initial`, `idle`, `pulling`, `error`.
        public var state: String
        public var records: Int
        public var hasCursor: Bool
        public var lastSyncedAt: Timestamp?
        public var lastSuccessAt: Timestamp?
        public var lastError: String?

        public init(
            collection: String, state: String, records: Int, hasCursor: Bool, lastSyncedAt: Timestamp?,
            lastSuccessAt: Timestamp?, lastError: String?
        ) {
            self.collection = collection
            self.state = state
            self.records = records
            self.hasCursor = hasCursor
            self.lastSyncedAt = lastSyncedAt
            self.lastSuccessAt = lastSuccessAt
            self.lastError = lastError
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(collection, forKey: .collection)
            try c.encode(state, forKey: .state)
            try c.encode(records, forKey: .records)
            try c.encode(hasCursor, forKey: .hasCursor)
            try c.encode(lastSyncedAt, forKey: .lastSyncedAt)
            try c.encode(lastSuccessAt, forKey: .lastSuccessAt)
            try c.encode(lastError, forKey: .lastError)
        }
    }

    public struct Retention: Codable, Sendable, Hashable {
        public var at: Timestamp?
        public var orders: Int
        public var devices: Int
        public var tickets: Int
        public var messages: Int
        /// Entries of the conflict log resolved before the cut-off (0 from a daemon that did not say).
        public var conflicts: Int

        public init(at: Timestamp?, orders: Int, devices: Int, tickets: Int, messages: Int, conflicts: Int = 0) {
            self.at = at
            self.orders = orders
            self.devices = devices
            self.tickets = tickets
            self.messages = messages
            self.conflicts = conflicts
        }

        /// The records removed (the conflict log's entries apart).
        public var removed: Int { orders + devices + tickets + messages }

        enum CodingKeys: String, CodingKey {
            case at, orders, devices, tickets, messages, conflicts
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                at: try c.decodeIfPresent(Timestamp.self, forKey: .at), orders: try c.decode(Int.self, forKey: .orders),
                devices: try c.decode(Int.self, forKey: .devices), tickets: try c.decode(Int.self, forKey: .tickets),
                messages: try c.decode(Int.self, forKey: .messages),
                conflicts: try c.decodeIfPresent(Int.self, forKey: .conflicts) ?? 0)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(at, forKey: .at)
            try c.encode(orders, forKey: .orders)
            try c.encode(devices, forKey: .devices)
            try c.encode(tickets, forKey: .tickets)
            try c.encode(messages, forKey: .messages)
            try c.encode(conflicts, forKey: .conflicts)
        }
    }

    public struct Metrics: Codable, Sendable, Hashable {
        public var runs: Int
        public var successes: Int
        public var failures: Int
        public var lastDurationMs: Int64?
        public var averageDurationMs: Int64?
        /// Conflicts in the audit log by outcome.
        public var conflictsByOutcome: [String: Int]

        public init(
            runs: Int, successes: Int, failures: Int, lastDurationMs: Int64?, averageDurationMs: Int64?,
            conflictsByOutcome: [String: Int]
        ) {
            self.runs = runs
            self.successes = successes
            self.failures = failures
            self.lastDurationMs = lastDurationMs
            self.averageDurationMs = averageDurationMs
            self.conflictsByOutcome = conflictsByOutcome
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(runs, forKey: .runs)
            try c.encode(successes, forKey: .successes)
            try c.encode(failures, forKey: .failures)
            try c.encode(lastDurationMs, forKey: .lastDurationMs)
            try c.encode(averageDurationMs, forKey: .averageDurationMs)
            try c.encode(conflictsByOutcome, forKey: .conflictsByOutcome)
        }
    }

    public init(
        state: SyncState, step: String? = nil, progress: Thousandths? = nil, message: String? = nil, online: Bool,
        probe: String, lastOnlineChange: Timestamp?, paused: Bool, nextRun: NextRun?, lastSyncAt: Timestamp?,
        lastSuccessAt: Timestamp?, pending: Int, failed: Int, dead: Int, held: Int, openConflicts: Int,
        clockOffsetMs: Int64, collections: [CollectionState], storeBytes: Int64, retention: Retention?,
        metrics: Metrics, link: Link? = nil
    ) {
        self.state = state
        self.step = step
        self.progress = progress
        self.message = message
        self.online = online
        self.probe = probe
        self.lastOnlineChange = lastOnlineChange
        self.paused = paused
        self.nextRun = nextRun
        self.lastSyncAt = lastSyncAt
        self.lastSuccessAt = lastSuccessAt
        self.pending = pending
        self.failed = failed
        self.dead = dead
        self.held = held
        self.openConflicts = openConflicts
        self.clockOffsetMs = clockOffsetMs
        self.collections = collections
        self.storeBytes = storeBytes
        self.retention = retention
        self.metrics = metrics
        self.link = link
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(state, forKey: .state)
        try c.encodeIfPresent(step, forKey: .step)
        try c.encodeIfPresent(progress, forKey: .progress)
        try c.encodeIfPresent(message, forKey: .message)
        try c.encode(online, forKey: .online)
        try c.encode(probe, forKey: .probe)
        try c.encode(lastOnlineChange, forKey: .lastOnlineChange)
        try c.encode(paused, forKey: .paused)
        try c.encode(nextRun, forKey: .nextRun)
        try c.encode(lastSyncAt, forKey: .lastSyncAt)
        try c.encode(lastSuccessAt, forKey: .lastSuccessAt)
        try c.encode(pending, forKey: .pending)
        try c.encode(failed, forKey: .failed)
        try c.encode(dead, forKey: .dead)
        try c.encode(held, forKey: .held)
        try c.encode(openConflicts, forKey: .openConflicts)
        try c.encode(clockOffsetMs, forKey: .clockOffsetMs)
        try c.encode(collections, forKey: .collections)
        try c.encode(storeBytes, forKey: .storeBytes)
        try c.encode(retention, forKey: .retention)
        try c.encode(metrics, forKey: .metrics)
        try c.encode(events, forKey: .events)
        try c.encode(eventsSince, forKey: .eventsSince)
        try c.encode(link, forKey: .link)
    }
}
