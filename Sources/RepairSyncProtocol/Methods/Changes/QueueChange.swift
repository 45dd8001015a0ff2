public import RepairSyncModels

extension RPC {
    /// Another program wrote a record in the store: queue exactly the fields that differ from the server copy and
    /// what is already queued. `queued: true` says the row's change is in the outbox — queued by this call, or
    /// already (by an earlier call, or by a sync run that found the row changed first: then `reason` is
    /// "already queued" and `seq` the change holding it). Nothing to queue is not an error (`queued: false` with the
    /// reason); an unknown id is -32001. `outcome` says which of these it was, for a program to act on.
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
            /// Which answer this is. Nil only from a daemon older than the field.
            public var outcome: Outcome?
            /// The change's number, when queued (the change that already held it, when it was); the dead change's,
            /// when `outcome` is `dead`.
            public var seq: Int64?
            /// The fields queued, when queued.
            public var fields: [String]?
            /// Why nothing was queued, in words; "already queued" when the change was in the outbox before this call.
            public var reason: String?
            /// Changes not on the server yet (pending, failed and held), this one included.
            public var pending: Int

            public init(
                queued: Bool, outcome: Outcome?, seq: Int64? = nil, fields: [String]? = nil, reason: String? = nil,
                pending: Int
            ) {
                self.queued = queued
                self.outcome = outcome
                self.seq = seq
                self.fields = fields
                self.reason = reason
                self.pending = pending
            }
        }

        /// What came of the call. Open: an outcome a newer daemon adds is kept as `unrecognized`.
        public enum Outcome: OpenEnum {
            /// Queued by this call (`queued: true`).
            case queued
            /// The row's change was in the outbox before this call (`queued: true`, `seq` the change holding it).
            case alreadyQueued
            /// Nothing to queue, the server has it: the row is its copy (also when a sync run found the edit first
            /// and has pushed it), or the record came from the server (`queued: false`).
            case onServer
            /// Nothing queued: the row's creation is dead — refused by the server, given up on after its attempts, or
            /// waiting for a create that is — and `seq` is that change, for `retry` or `discard` (`queued: false`).
            /// Queueing the row again would send nothing new.
            case dead
            case unrecognized(String)

            public static let known: [Outcome] = [.queued, .alreadyQueued, .onServer, .dead]

            public var rawValue: String {
                switch self {
                case .queued: "queued"
                case .alreadyQueued: "already_queued"
                case .onServer: "on_server"
                case .dead: "dead"
                case .unrecognized(let raw): raw
                }
            }

            public var displayName: String { rawValue }
        }
    }
}
