import ArgumentParser

/// `repairctl order set-status|note|show`.
struct OrderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order", abstract: "Change or show one order.", subcommands: [SetStatus.self, Note.self, Show.self])
}
