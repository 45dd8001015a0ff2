extension Simulator {
    /// Seeds whose failures are open bugs, found once the simulator drew stale copies inside the right page and 2 to
    /// 4 attempts before a change is dead: left out of `SimulatorTests`' 2,000-seed batch and replayed there as known
    /// issues, so that they stay visible (that test fails as soon as one no longer fails: it moves to the regressions
    /// once fixed). `scripts/simulate` and `scripts/mutants/run` leave them out of their batches too, so that a
    /// mutant is judged by seeds that pass with every fix in.
    public static let openBugs: [UInt64: String] = [:]
}
