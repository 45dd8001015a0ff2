import ArgumentParser
import RepairSyncProtocol

/// Paging options of the list commands.
struct Paging: ParsableArguments {
    @Option(help: "At most this many rows (1…\(RepairSyncProtocol.Paging.maxLimit)).") var limit = 50
    @Option(help: "Skip this many rows.") var offset = 0

    /// Refused here, as a usage error (exit 64), rather than by the daemon after a connection.
    func validate() throws {
        guard (1...RepairSyncProtocol.Paging.maxLimit).contains(limit) else {
            throw ValidationError("--limit must be 1…\(RepairSyncProtocol.Paging.maxLimit), not \(limit)")
        }
        guard offset >= 0 else { throw ValidationError("--offset must be 0 or more, not \(offset)") }
    }
}
