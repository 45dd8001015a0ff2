import ArgumentParser

/// `repairctl device update`.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Change one device.", subcommands: [Update.self])
}
