extension RPC {
    /// The outbox, oldest first: every local change not on the server yet, dead ones included (`state` filters). For
    /// the group: the changes carry the shop's records' values (a client's email and phone, an internal note).
    public enum Pending: ControlMethod {
        public typealias Result = [OutboxChange]
        public static let name = "pending"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var state: ChangeState?

            public init(state: ChangeState? = nil) { self.state = state }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case state
            }

            public func validate() throws(JSONRPCError) {
                if let state, !state.isKnown {
                    throw .invalidParams(
                        "state",
                        "must be one of \(ChangeState.known.map(\.rawValue).joined(separator: ", ")), not \(state)")
                }
            }
        }
    }
}
