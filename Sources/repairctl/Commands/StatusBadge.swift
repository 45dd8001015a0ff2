import RepairSyncControlClient
import RepairSyncProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `repairctl status --badge`: what a status bar runs every few seconds — the pending count, `offline`, or `!` on
/// error; never an error itself (a bar must not break), so without a daemon it prints `offline` and exits 0.
///
/// Its exact command lines skip ArgumentParser: measured with callgrind, parsing them there cost half of the
/// badge's instructions (its `--generate-completion-script` check and each command's arguments are found by
/// reflection, which scans every protocol conformance of the process). Any other command line — `--help`, a typo, an
/// option this does not know — goes to ArgumentParser as before.
enum StatusBadge {
    /// The socket the command line names (or the default), when it is exactly `status --badge [--socket PATH]` in
    /// any order after `status`; nil otherwise.
    static func fastPath(_ arguments: [String]) -> String? {
        var rest = arguments.dropFirst()
        guard rest.first == "status" else { return nil }
        rest = rest.dropFirst()
        var badge = false
        var socket: String?
        while let argument = rest.first {
            rest = rest.dropFirst()
            if argument == "--badge", !badge {
                badge = true
            } else if argument == "--socket", socket == nil, let path = rest.first, !path.hasPrefix("-") {
                socket = path
                rest = rest.dropFirst()
            } else if argument.hasPrefix("--socket="), socket == nil {
                socket = String(argument.dropFirst("--socket=".count))
            } else {
                return nil
            }
        }
        guard badge else { return nil }
        return socket ?? getenv("REPAIRSYNCD_SOCKET").map { String(cString: $0) } ?? "/run/repairsyncd/control.sock"
    }

    /// The badge for the daemon on `socket`.
    static func line(socket: String) -> String {
        guard let client = try? ControlClient(path: socket) else { return "offline" }
        // A bar runs this every few seconds: a daemon that accepts and does not answer must not leave one more
        // process waiting each time.
        client.setReplyTimeout(seconds: replyTimeout)
        guard let badge = try? client.call(StatusSnapshot.Badge.self) else { return "offline" }
        return badge.text
    }

    /// Seconds without an answer after which the badge says `offline`.
    static let replyTimeout = 5
}
