import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl purge [--force]`: wipe the local replica (logout, decommission).
struct Purge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the local replica (store, WAL, cursors, outbox) and stop the daemon.",
        discussion: """
            Refuses while local changes are not on the server yet, unless --force (they are then lost). The \
            daemon stops afterwards; starting it again begins a fresh initial sync.
            """)

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Purge even though local changes are pending (they are lost).") var force = false

    func run() throws {
        let result = try options.call("purge", .object(["force": .bool(force)]))
        if options.printJSONIfAsked(result) { return }
        guard case .array(let removed)? = result["removed"] else { return }
        for file in removed { print("removed \(Output.cell(file))") }
        if let discarded = result["discardedChanges"]?.intValue, discarded > 0 {
            print(Output.yellow("discarded \(discarded) local change(s) that were not on the server"))
        }
        print("repairsyncd is stopping")
    }
}
