import ArgumentParser

/// `repairctl device update|new`.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Change one device, or book one in.", subcommands: [Update.self, New.self])
}
