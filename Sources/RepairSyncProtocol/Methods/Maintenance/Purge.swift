extension RPC {
    /// Wipe the local replica (its database, WAL and shared-memory files, cursors and outbox with them), then stop
    /// the daemon once the reply is written. Refused with -32002 (`data.field` = `force`) while changes are not on
    /// the server, unless `force`.
    public enum Purge: ControlMethod {
        public static let name = "purge"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var force: Bool?

            public init(force: Bool? = nil) { self.force = force }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case force
            }
        }

        public struct Result: Codable, Sendable, Hashable {
            public var removed: [String]
            public var discardedChanges: Int
            public var stopping: Bool

            public init(removed: [String], discardedChanges: Int, stopping: Bool) {
                self.removed = removed
                self.discardedChanges = discardedChanges
                self.stopping = stopping
            }
        }
    }
}
