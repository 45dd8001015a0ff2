extension RPC {
    /// Whether the daemon answers: `"pong"`.
    public enum Ping: ControlMethod {
        public typealias Result = String
        public static let name = "ping"
        public static let access = Access.open
    }
}
