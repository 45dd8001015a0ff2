import ArgumentParser
import Foundation
import RepairSyncControl
import RepairSyncDaemon

/// `repairctl doctor`: one line per check, a fix for each warning or failure; exit 1 when something fails.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the configuration, token, daemon, API, clock, store, changes and connectivity.",
        discussion: "Exit 0 when nothing fails (warnings allowed), 1 otherwise. Works without the daemon too.")

    @OptionGroup var options: GlobalOptions
    @Option(help: ArgumentHelp("The daemon's configuration file.", valueName: "path"))
    var config = DaemonConfiguration.defaultPath

    func run() async throws {
        let checks = await Doctor.run(
            configPath: config, socketPath: options.socketPath, environment: ProcessInfo.processInfo.environment)
        if options.json {
            print(JSONValue.array(checks.map(\.json)).serialized)
        } else {
            let width = checks.map(\.name.count).max() ?? 0
            for check in checks {
                let label: String =
                    switch check.level {
                    case .ok: Output.green("ok     ")
                    case .warn: Output.yellow("warn   ")
                    case .fail: Output.red("fail   ")
                    case .skipped: "skipped"
                    }
                print("\(label) \(check.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(check.detail)")
                if let fix = check.fix, check.level == .warn || check.level == .fail {
                    print("        \(String(repeating: " ", count: width))  → \(fix)")
                }
            }
        }
        if checks.contains(where: { $0.level == .fail }) { throw ExitCode.failure }
    }
}
