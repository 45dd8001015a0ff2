extension RPC {
    /// Sent after `subscribe` on every change of the status.
    public enum StatusChanged: ControlNotification {
        public typealias Params = StatusSnapshot
        public static let name = "statusChanged"
    }
}
