public import RepairSyncModels

/// How one check came out.
public enum Outcome: String, Sendable, Codable, CaseIterable {
    case passed
    case failed
    /// Nothing in the run exercised the clause (no tombstone, no 429…). Not a pass: the server may still be wrong.
    case notExercised = "not_exercised"
    /// Not run: left out by `--only`, by `--dry-run`, or because what it needs could not be had.
    case skipped

    /// The four-letter tag of the text output.
    var tag: String {
        switch self {
        case .passed: "PASS"
        case .failed: "FAIL"
        case .notExercised: "N/E "
        case .skipped: "SKIP"
        }
    }
}

/// One check's outcome, with the section it checks and a one-line reason.
public struct CheckResult: Sendable, Hashable {
    public let id: CheckID
    public let section: String
    public let clause: String
    public let outcome: Outcome
    /// Why, in one line: what was seen (a pass) or the first departure from the contract (a failure).
    public let reason: String
}

/// A write the run makes, announced before it is made.
public struct PlannedWrite: Sendable, Hashable {
    public let collection: SyncCollection
    public let id: String
    public let what: String
    /// What became of the fields the run changed; nil until the run has tried to restore them.
    public var restoration: String?
}
