extension RPC {
    /// Give up a dead change for good: it leaves the outbox, the audit log keeps its values, and the record shows
    /// the server's values again. Answers the change as it was; -32001 when there is no dead change with that seq.
    public enum Discard: ControlMethod {
        public typealias Result = OutboxChange
        public static let name = "discard"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var seq: Int64

            public init(seq: Int64) { self.seq = seq }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case seq
            }
        }
    }
}
