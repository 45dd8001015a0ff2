public import RepairSyncModels

extension RPC {
    /// Another program wrote a record in the store: queue exactly the fields that differ from the server copy and
    /// what is already queued. `queued: true` says the row's change is in the outbox — queued by this call, or
    /// already (by an earlier call, or by a sync run that found the row changed first: then `reason` is
    /// "already queued" and `seq` the change holding it). Nothing to queue is not an error (`queued: false` with the
    /// reason); an unknown id is -32001.
    public enum QueueChange: ControlMethod {
        public static let name = "queueChange"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var kind: ChangeKind
            public var id: String

            public init(kind: ChangeKind, id: String) {
                self.kind = kind
                self.id = id
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case kind, id
            }
        }

        public struct Result: Codable, Sendable, Hashable {
            public var queued: Bool
            /// The change's number, when queued (the change that already held it, when it was).
            public var seq: Int64?
            /// The fields queued, when queued.
            public var fields: [String]?
            /// Why nothing was queued; "already queued" when the change was in the outbox before this call.
            public var reason: String?
            /// Changes not on the server yet (pending, failed and held), this one included.
            public var pending: Int

            public init(queued: Bool, seq: Int64? = nil, fields: [String]? = nil, reason: String? = nil, pending: Int) {
                self.queued = queued
                self.seq = seq
                self.fields = fields
                self.reason = reason
                self.pending = pending
            }
        }
    }
}
