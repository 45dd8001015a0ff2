extension RPC {
    /// The daemon's checks: the configuration it runs with, the token file, the API and the token, the clock, the
    /// store, the changes, connectivity and the last sync.
    public enum Doctor: ControlMethod {
        public typealias Result = [DoctorCheck]
        public static let name = "doctor"
        public static let access = Access.group
    }
}
