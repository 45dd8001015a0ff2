import ArgumentParser

/// `repairctl ticket reply|show`.
struct TicketCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ticket", abstract: "Reply to or show one ticket.", subcommands: [Reply.self, Show.self])
}
