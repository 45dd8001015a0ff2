/// What the run found for each check, gathered while it goes: how many things a check examined, the departures
/// from the contract it saw, and why it was skipped. `result(for:)` turns that into an outcome:
/// a departure fails the check; nothing examined leaves it not exercised; otherwise it passed.
final class Findings {
    private struct Entry {
        var examined = 0
        var problems: [String] = []
        var problemCount = 0
        var summary: String?
        var skipped: String?
        var notExercised: String?
    }

    private var entries: [CheckID: Entry] = [:]

    /// Counts `count` things the check looked at and found right (records, responses, requests).
    func examined(_ id: CheckID, _ count: Int = 1) {
        entries[id, default: Entry()].examined += count
    }

    /// A departure from the contract. The first few are kept for the reason; all are counted.
    func problem(_ id: CheckID, _ text: String) {
        // One line, whatever the server put in what is quoted.
        let text = String(text.map { $0.isNewline ? " " : $0 })
        entries[id, default: Entry()].examined += 1
        entries[id, default: Entry()].problemCount += 1
        if entries[id, default: Entry()].problems.count < 3 { entries[id, default: Entry()].problems.append(text) }
    }

    /// The reason printed when the check passes (otherwise a count of what it examined).
    func summary(_ id: CheckID, _ text: String) {
        entries[id, default: Entry()].summary = text
    }

    /// The check was not run (the reason says why).
    func skip(_ id: CheckID, _ reason: String) {
        entries[id, default: Entry()].skipped = reason
    }

    /// Why the check was not exercised, when nothing in the run reached it.
    func notExercised(_ id: CheckID, _ reason: String) {
        entries[id, default: Entry()].notExercised = reason
    }

    /// How many things the check looked at (its departures included).
    func examinedCount(_ id: CheckID) -> Int { entries[id]?.examined ?? 0 }

    func hasProblems(_ id: CheckID) -> Bool { (entries[id]?.problemCount ?? 0) > 0 }

    func result(for id: CheckID, clause: Clause) -> CheckResult {
        let entry = entries[id] ?? Entry()
        let outcome: Outcome
        let reason: String
        if entry.problemCount > 0 {
            outcome = .failed
            let more = entry.problemCount - 1
            reason = entry.problems[0] + (more > 0 ? " (and \(more) more)" : "")
        } else if let skipped = entry.skipped {
            outcome = .skipped
            reason = skipped
        } else if entry.examined > 0 {
            outcome = .passed
            reason = entry.summary ?? "\(entry.examined) examined, all as the contract says"
        } else {
            outcome = .notExercised
            reason = entry.notExercised ?? "nothing in this run exercised it"
        }
        return CheckResult(id: id, section: clause.section, clause: clause.summary, outcome: outcome, reason: reason)
    }
}
