extension Simulator {
    /// Open bugs the simulator found, each as the shrunk operation list of the seed that found it (a list, not the
    /// seed: a change of the draws moves a seed's operations, a list stays). `SimulatorTests` replays them as known
    /// issues, so that they stay visible; that test fails as soon as one no longer fails — the list then moves to the
    /// regressions.
    public static let openBugs: [(seed: UInt64, bug: String, operations: [SimOperation])] = []
}
