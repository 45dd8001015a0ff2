extension RPC {
    /// Decide an open conflict: keep the local values, the remote ones, or choose per field. -32001 when no open
    /// conflict has that id.
    public enum ResolveConflict: ControlMethod {
        public static let name = "resolveConflict"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var id: Int64
            public var keep: ConflictChoice

            public init(id: Int64, keep: ConflictChoice) {
                self.id = id
                self.keep = keep
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case id, keep
            }

            public func validate() throws(JSONRPCError) {
                if id < 1 { throw .invalidParams("id", "must be an integer in 1...\(Int64.max)") }
            }
        }

        public struct Result: Codable, Sendable, Hashable {
            public var resolved: Bool
            public init(resolved: Bool) { self.resolved = resolved }
        }
    }
}
