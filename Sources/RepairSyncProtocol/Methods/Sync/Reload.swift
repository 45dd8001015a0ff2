extension RPC {
    /// Reload the configuration file (like SIGHUP). An invalid file is -32002 naming the key, and the running
    /// configuration stays.
    public enum Reload: ControlMethod {
        public static let name = "reload"
        public static let access = Access.mutating

        public struct Result: Codable, Sendable, Hashable {
            public var reloaded: Bool
            /// Keys in the file this version does not know (ignored).
            public var unknownKeys: [String]

            public init(reloaded: Bool, unknownKeys: [String]) {
                self.reloaded = reloaded
                self.unknownKeys = unknownKeys
            }
        }
    }
}
