import ArgumentParser

/// `repairctl order set-status|note|show|new`.
struct OrderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order", abstract: "Change, show or book in one order.",
        subcommands: [SetStatus.self, Note.self, Show.self, New.self])
}
