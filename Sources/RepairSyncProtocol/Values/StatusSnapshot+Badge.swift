extension StatusSnapshot {
    /// What a status-bar badge reads of the status: the state and the pending count. A bar runs
    /// `repairctl status --badge` every few seconds; decoding these two members instead of the whole status is a
    /// quarter of its work less.
    public struct Badge: ControlResultView, Hashable {
        public typealias Method = RPC.Status

        public var state: SyncState
        public var pending: Int

        public init(state: SyncState, pending: Int) {
            self.state = state
            self.pending = pending
        }

        /// The pending count, `offline`, or `!` on error.
        public var text: String {
            switch state {
            case .error: "!"
            case .offline: "offline"
            default: String(pending)
            }
        }
    }

    public var badge: Badge { Badge(state: state, pending: pending) }
}
