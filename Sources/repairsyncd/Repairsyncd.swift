import ArgumentParser
import RepairSyncModels
import RepairSyncStore

@main
struct Repairsyncd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairsyncd",
        abstract: "Keeps a local replica of the Repair Minder records and syncs local changes with the API.",
        version: ProductInfo.version
    )

    @Option(name: .customLong("self-check"), help: ArgumentHelp(
        "Open (or create) the store at PATH, check its schema and integrity, print what it holds, and exit.",
        valueName: "store-path"))
    var selfCheckPath: String?

    func run() throws {
        guard let selfCheckPath else {
            throw ValidationError("nothing to do yet: pass --self-check PATH (the daemon arrives with issue 5)")
        }
        let report: StoreSelfCheck
        do {
            report = try StoreSelfCheck.run(path: selfCheckPath)
        } catch {
            print("store: FAIL \(error)")
            throw ExitCode.failure
        }
        print("store: \(report.path)")
        print("migrations: \(report.migrations.joined(separator: ", "))")
        print("integrity: \(report.integrityProblems.isEmpty ? "ok" : report.integrityProblems.joined(separator: "; "))")
        print("write/read round trip: \(report.roundTripOK ? "ok" : "FAIL")")
        for collection in SyncCollection.pullOrder {
            print("  \(collection.name): \(report.counts[collection] ?? 0) records")
        }
        if !report.isHealthy { throw ExitCode.failure }
    }
}
