extension RPC {
    /// Dead changes go out again (those named by `ids`, else all of them): `{"retried": n}`. A seq that is not a dead
    /// change is -32001.
    public enum Retry: ControlMethod {
        public static let name = "retry"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var ids: [Int64]?

            public init(ids: [Int64]? = nil) { self.ids = ids }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case ids
            }
        }

        public struct Result: Codable, Sendable, Hashable {
            public var retried: Int
            public init(retried: Int) { self.retried = retried }
        }
    }
}
