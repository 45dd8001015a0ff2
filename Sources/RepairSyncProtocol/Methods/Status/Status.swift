extension RPC {
    /// The sync status (`StatusSnapshot`): what the engine does, connectivity, the schedule, counts, collections.
    public enum Status: ControlMethod {
        public typealias Result = StatusSnapshot
        public static let name = "status"
        public static let access = Access.open
    }
}
