import ArgumentParser
import RepairSyncProtocol

/// Every command names itself (`commandName:`): without a name ArgumentParser derives one from the type with
/// `String(describing:)`, whose protocol-conformance lookups scanned every conformance record of the process for each
/// of the 30 commands at every start — three quarters of `repairctl status --badge`'s instructions.
struct Repairctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairctl",
        abstract: "Talk to repairsyncd: sync status, local changes, conflicts, and the local replica.",
        discussion: """
            Talks only to the daemon's control socket (--socket, or REPAIRSYNCD_SOCKET, default \
            /run/repairsyncd/control.sock). Exit codes: 0 success, 1 the operation failed, 64 usage, \
            69 the daemon cannot be reached.
            """,
        version: ProductInfo.version,
        subcommands: [
            Status.self, Watch.self, Queue.self, Sync.self, Resync.self, Pending.self, Retry.self, Discard.self,
            Conflicts.self,
            Resolve.self, Pause.self, Resume.self, Reload.self, ClientCommand.self, OrderCommand.self,
            DeviceCommand.self,
            TicketCommand.self, Orders.self, Devices.self, Clients.self, Tickets.self, Dashboard.self, Ping.self,
            Stats.self, Backup.self, Purge.self, Doctor.self,
        ]
    )
}

/// The entry point: the status bar's `status --badge` straight away, everything else through ArgumentParser.
@main
enum RepairctlMain {
    static func main() {
        if let socket = StatusBadge.fastPath(CommandLine.arguments) {
            Output.line(TerminalText(StatusBadge.line(socket: socket)))
            return
        }
        Repairctl.main()
    }
}
