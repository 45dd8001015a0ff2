extension RPC {
    /// `true`; then a `statusChanged` notification on every change of the status, until the connection closes. One
    /// subscription per connection.
    public enum Subscribe: ControlMethod {
        public typealias Result = Bool
        public static let name = "subscribe"
        public static let access = Access.open
    }
}
