extension RPC {
    /// Runs, successes, durations, conflicts, pushes, pulls and HTTP responses (`StatsReport`).
    public enum Stats: ControlMethod {
        public typealias Result = StatsReport
        public static let name = "stats"
        public static let access = Access.open
    }
}
