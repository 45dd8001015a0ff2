import ArgumentParser
import RepairSyncModels

@main
struct Repairctl: AsyncParsableCommand {
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
            Status.self, Watch.self, Queue.self, Sync.self, Pending.self, Retry.self, Conflicts.self, Resolve.self,
            Pause.self, Resume.self, Reload.self, ClientCommand.self, OrderCommand.self, DeviceCommand.self, TicketCommand.self,
            Orders.self, Devices.self, Clients.self, Tickets.self, Dashboard.self, Ping.self, Stats.self, Backup.self, Purge.self, DoctorCommand.self,
        ]
    )
}
