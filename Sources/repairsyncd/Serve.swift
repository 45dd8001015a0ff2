import ArgumentParser
import Foundation
import RepairSyncDaemon
import RepairSyncModels
import RepairSyncStore

/// The daemon itself (the default subcommand: `repairsyncd --config PATH`).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the daemon (the default).",
        discussion: """
            Runs until SIGTERM or SIGINT; SIGHUP reloads the configuration. The control socket speaks JSON-RPC 2.0 \
            (see repairctl and docs/rpc.md). Exit codes: 0 clean stop, 1 runtime failure, 78 invalid configuration.
            """)

    @Option(name: .customLong("config"), help: ArgumentHelp("The configuration file.", valueName: "path"))
    var configPath = DaemonConfiguration.defaultPath

    @Flag(name: .customLong("check-config"), help: "Validate the configuration, print it (token redacted), and exit.")
    var checkConfig = false

    @Option(
        name: .customLong("self-check"),
        help: ArgumentHelp(
            "Open (or create) the store at PATH, check its schema and integrity, print what it holds, and exit.",
            valueName: "store-path"))
    var selfCheckPath: String?

    func run() async throws {
        if let selfCheckPath { return try selfCheck(selfCheckPath) }
        if checkConfig {
            do {
                let loaded = try await ConfigurationLoader.load(path: configPath)
                print("# \(configPath): valid")
                print(loaded.rendered)
                return
            } catch {
                FileHandle.standardError.write(Data("repairsyncd: \(error)\n".utf8))
                throw ExitCode(ConfigurationError.exitCode)
            }
        }
        // Before the daemon starts any work: its tasks run on the threads that serve its sockets.
        TaskPlacement.runTasksOnEventLoops()
        let code = await Daemon.run(configPath: configPath)
        if code != 0 { throw ExitCode(code) }
    }

    func selfCheck(_ path: String) throws {
        let report: StoreSelfCheck
        do {
            report = try StoreSelfCheck.run(path: path)
        } catch {
            print("store: FAIL \(error)")
            throw ExitCode.failure
        }
        print("store: \(report.path)")
        print("migrations: \(report.migrations.joined(separator: ", "))")
        print(
            "integrity: \(report.integrityProblems.isEmpty ? "ok" : report.integrityProblems.joined(separator: "; "))")
        print("write/read round trip: \(report.roundTripOK ? "ok" : "FAIL")")
        for collection in SyncCollection.pullOrder {
            print("  \(collection.name): \(report.counts[collection] ?? 0) records")
        }
        if !report.isHealthy { throw ExitCode.failure }
    }
}
