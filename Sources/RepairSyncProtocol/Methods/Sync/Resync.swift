public import RepairSyncModels

extension RPC {
    /// Pull `collections` again from the beginning, for an admin who suspects they drifted, without purging the
    /// store: the run (after pushing anything pending) forgets their cursors and marks their records, pulls
    /// everything the server has, and removes what it no longer has once the record's own endpoint confirms it.
    /// Pending changes are kept. Answers as `sync` does (`wait` included); the report lists them under `resynced`.
    public enum Resync: ControlMethod {
        public typealias Result = Sync.Result
        public static let name = "resync"
        public static let access = Access.mutating

        public struct Params: ControlParams, Hashable {
            public var collections: [SyncCollection]
            public var wait: Bool?

            public init(collections: [SyncCollection], wait: Bool? = nil) {
                self.collections = collections
                self.wait = wait
            }

            public enum CodingKeys: String, CodingKey, CaseIterable {
                case collections, wait
            }

            public func validate() throws(JSONRPCError) {
                if collections.isEmpty { throw .invalidParams("collections", "name at least one collection") }
            }
        }
    }
}
