import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `repairctl doctor`: asks the running daemon for its checks (it knows its configuration, holds the token and the
/// store); when the socket does not answer, says so and points to `repairsyncd doctor`, which works without it.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Ask the daemon to check its configuration, token, API, clock, store, changes and connectivity.",
        discussion: """
            Exit 0 when nothing fails (warnings allowed), 1 otherwise. Without a daemon answering on the socket, run \
            `repairsyncd doctor` (as root) for the checks that work without it.
            """)

    @OptionGroup var options: GlobalOptions

    func run() throws {
        var checks: [DoctorCheck] = []
        let socket = options.socketPath
        do {
            let client = try ControlClient(path: socket)
            client.setReplyTimeout(seconds: GlobalOptions.replyTimeout(for: RPC.Doctor.name))
            checks.append(DoctorCheck("daemon", .ok, "answering on \(socket)\(Self.mode(of: socket))"))
            checks += try client.call(RPC.Doctor.self)
        } catch .unreachable(let sentence) {
            checks.append(
                DoctorCheck(
                    "daemon", .fail, sentence,
                    fix: "run `repairsyncd doctor` (as root) for the checks that work without the daemon"))
        } catch .rpc(let error) where error.kind == .unauthorizedPeer {
            checks.append(
                DoctorCheck(
                    "daemon checks", .warn, "the daemon answers status only to this user",
                    fix: "run doctor as root or as a member of the socket's group"))
        } catch {
            checks.append(
                DoctorCheck(
                    "daemon", .fail, "the daemon did not answer the checks: \(error)",
                    fix: "run `repairsyncd doctor` (as root) for the checks that work without the daemon"))
        }
        if options.json {
            Output.json(try JSONValueEncoder().encode(checks).serialized)
        } else {
            for line in DoctorCheck.reportLines(checks) {
                let label = TerminalText(line.label)
                Output.line((line.level.map { Self.paint($0, label) } ?? label) + TerminalText(line.text))
            }
        }
        if checks.contains(where: { $0.level == .fail }) { throw ExitCode.failure }
    }

    static func paint(_ level: DoctorCheck.Level, _ label: TerminalText) -> TerminalText {
        switch level {
        case .ok: Output.green(label)
        case .warn: Output.yellow(label)
        case .fail: Output.red(label)
        default: label
        }
    }

    /// " (mode 0660)" for the socket file.
    static func mode(of path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "" }
        return " (mode 0\(String(info.st_mode & 0o777, radix: 8)))"
    }
}
