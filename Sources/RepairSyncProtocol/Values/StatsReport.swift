/// The `stats` result: how well sync has been doing since the daemon started and over the last 24 hours.
public struct StatsReport: Codable, Sendable, Hashable {
    public struct Period: Codable, Sendable, Hashable {
        public var runs: Int
        public var successes: Int
        public var failures: Int
        /// Successes per run; null before the first run.
        public var successRate: Thousandths?
        public var averageDurationMs: Int64?
        public var lastDurationMs: Int64?
        public var conflicts: Int
        /// Conflicts per run; null before the first run.
        public var conflictRate: Thousandths?
        /// Changes pushed and records pulled, by collection.
        public var pushed: [String: Int]
        public var pulled: [String: Int]

        public init(
            runs: Int, successes: Int, failures: Int, successRate: Thousandths?, averageDurationMs: Int64?,
            lastDurationMs: Int64?, conflicts: Int, conflictRate: Thousandths?, pushed: [String: Int],
            pulled: [String: Int]
        ) {
            self.runs = runs
            self.successes = successes
            self.failures = failures
            self.successRate = successRate
            self.averageDurationMs = averageDurationMs
            self.lastDurationMs = lastDurationMs
            self.conflicts = conflicts
            self.conflictRate = conflictRate
            self.pushed = pushed
            self.pulled = pulled
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(runs, forKey: .runs)
            try c.encode(successes, forKey: .successes)
            try c.encode(failures, forKey: .failures)
            try c.encode(successRate, forKey: .successRate)
            try c.encode(averageDurationMs, forKey: .averageDurationMs)
            try c.encode(lastDurationMs, forKey: .lastDurationMs)
            try c.encode(conflicts, forKey: .conflicts)
            try c.encode(conflictRate, forKey: .conflictRate)
            try c.encode(pushed, forKey: .pushed)
            try c.encode(pulled, forKey: .pulled)
        }
    }

    public var lifetime: Period
    public var last24h: Period
    /// The conflict audit log by outcome.
    public var conflictOutcomes: [String: Int]
    /// HTTP responses since the daemon started, by class (`2xx`, `4xx`, …).
    public var httpResponses: [String: Int]

    public init(lifetime: Period, last24h: Period, conflictOutcomes: [String: Int], httpResponses: [String: Int]) {
        self.lifetime = lifetime
        self.last24h = last24h
        self.conflictOutcomes = conflictOutcomes
        self.httpResponses = httpResponses
    }
}
