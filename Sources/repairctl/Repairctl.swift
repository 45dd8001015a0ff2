import ArgumentParser
import RepairSyncModels

@main
struct Repairctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repairctl",
        abstract: "Talks to repairsyncd over its control socket.",
        version: ProductInfo.version
    )
}
