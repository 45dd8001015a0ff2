import ArgumentParser
import RepairSyncReliability

@main
struct Soak: AsyncParsableCommand {
    func run() async throws {}
}
