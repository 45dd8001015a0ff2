import ArgumentParser
import RepairSyncModels

@main
struct Repairsyncd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairsyncd",
        abstract: "Keeps a local replica of the Repair Minder records and syncs local changes with the API.",
        discussion: """
            Without a subcommand it runs the daemon (`serve`). `repairsyncd doctor` checks what can be checked \
            without a running daemon.
            """,
        version: ProductInfo.version,
        subcommands: [Serve.self, DoctorCommand.self],
        defaultSubcommand: Serve.self
    )
}
