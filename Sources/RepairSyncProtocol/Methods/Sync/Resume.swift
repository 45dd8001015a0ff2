extension RPC {
    /// Resume automatic runs: `{"paused": false}`.
    public enum Resume: ControlMethod {
        public typealias Result = PauseState
        public static let name = "resume"
        public static let access = Access.mutating
    }
}
