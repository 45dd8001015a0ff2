import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl purge [--force]`: wipe the local replica (logout, decommission).
struct Purge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Delete the local replica (store, WAL, cursors, outbox) and stop the daemon.",
        discussion: """
            Refuses while local changes are not on the server yet, unless --force (they are then lost). The \
            daemon stops afterwards; starting it again begins a fresh initial sync.
            """)

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Purge even though local changes are pending (they are lost).") var force = false

    func run() throws {
        let reply = try options.call(RPC.Purge.self, .init(force: force))
        if options.printJSONIfAsked(reply.json) { return }
        for file in reply.result.removed { Output.line("removed \(file)") }
        if reply.result.discardedChanges > 0 {
            Output.line(
                Output.yellow("discarded \(reply.result.discardedChanges) local change(s) that were not on the server"))
        }
        Output.line("repairsyncd is stopping")
    }
}
