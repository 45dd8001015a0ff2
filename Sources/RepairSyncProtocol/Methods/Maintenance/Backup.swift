extension RPC {
    /// A consistent copy of the store (SQLite's online backup, checked with `integrity_check`), streamed in
    /// `backupChunk` notifications before the reply; the client compares the byte count.
    public enum Backup: ControlMethod {
        public static let name = "backup"
        public static let access = Access.group

        public struct Result: Codable, Sendable, Hashable {
            public var bytes: Int64
            /// `ok`.
            public var integrity: String

            public init(bytes: Int64, integrity: String) {
                self.bytes = bytes
                self.integrity = integrity
            }
        }
    }
}
