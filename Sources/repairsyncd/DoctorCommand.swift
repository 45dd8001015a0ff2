import ArgumentParser
import Foundation
import RepairSyncDaemon
import RepairSyncProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `repairsyncd doctor`: the checks that need no running daemon, for when `repairctl doctor` cannot reach it.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the configuration, the token, the socket, the API and the store without the daemon.",
        discussion: """
            For when the daemon does not answer (`repairctl doctor` asks the running daemon). Run it as root or as \
            the daemon's user: another user sees only what it may read. Exit 0 when nothing fails (warnings \
            allowed), 1 otherwise.
            """)

    @Option(name: .customLong("config"), help: ArgumentHelp("The configuration file.", valueName: "path"))
    var configPath = DaemonConfiguration.defaultPath

    @Flag(help: "Print the checks as JSON (the shape of the `doctor` method, docs/rpc.md).")
    var json = false

    func run() async throws {
        let checks = await Doctor.run(configPath: configPath, environment: ProcessInfo.processInfo.environment)
        if json {
            print(try JSONValueEncoder().encode(checks).serialized)
        } else {
            // Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).
            let noColor = !(ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
            let colour = isatty(STDOUT_FILENO) == 1 && !noColor
            // The label is ours and may be coloured; the rest (a check's detail, often the server's or a file's
            // words) is shown, never obeyed, as `repairctl doctor` shows it.
            for line in DoctorCheck.reportLines(checks) {
                var label = line.label
                if colour, let level = line.level {
                    let code = level == .ok ? "32" : level == .fail ? "31" : level == .warn ? "33" : "0"
                    label = "\u{1B}[\(code)m\(label)\u{1B}[0m"
                }
                print(label + TerminalSafe.line(line.text))
            }
        }
        if checks.contains(where: { $0.level == .fail }) { throw ExitCode.failure }
    }
}
