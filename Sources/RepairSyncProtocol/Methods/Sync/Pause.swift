extension RPC {
    /// Stop automatic runs (requested ones still run): `{"paused": true}`.
    public enum Pause: ControlMethod {
        public typealias Result = PauseState
        public static let name = "pause"
        public static let access = Access.mutating
    }

    /// Whether automatic runs are paused (`pause`, `resume`).
    public struct PauseState: Codable, Sendable, Hashable {
        public var paused: Bool
        public init(paused: Bool) { self.paused = paused }
    }
}
