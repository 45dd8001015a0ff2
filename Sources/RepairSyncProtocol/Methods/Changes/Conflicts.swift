extension RPC {
    /// The conflict audit log, newest first (`open`: only those waiting for a decision). For the group: the entries
    /// carry the records' local and server values.
    public enum Conflicts: ControlMethod {
        public typealias Result = [ConflictEntry]
        public static let name = "conflicts"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var open: Bool?
            /// 1…10000, default 1000.
            public var limit: Int?

            public init(open: Bool? = nil, limit: Int? = nil) {
                self.open = open
                self.limit = limit
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case open, limit
            }

            public func validate() throws(JSONRPCError) {
                if let limit, !(1...10_000).contains(limit) {
                    throw .invalidParams("limit", "must be an integer in 1...10000")
                }
            }
        }
    }
}
