import ArgumentParser

/// `repairctl client new`.
struct ClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "Book a client in (works offline).", subcommands: [New.self])
}
