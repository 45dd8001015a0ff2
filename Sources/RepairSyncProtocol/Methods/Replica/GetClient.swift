public import RepairSyncModels

extension RPC {
    /// One client from the replica; -32001 when it is not there.
    public enum GetClient: ControlMethod {
        public typealias Result = Client
        public static let name = "getClient"
        public static let access = Access.group

        public struct Params: ControlParams, Hashable {
            public var id: String

            public init(id: String) { self.id = id }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case id
            }
        }
    }
}
