import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension DeviceCommand {
    /// `repairctl device update <id> [--status] [--diagnosis] [--resolution]`.
    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update", abstract: "Change a device's status, diagnosis or resolution.")
        @OptionGroup var options: GlobalOptions
        @Argument var id: String
        @Option var status: String?
        @Option var diagnosis: String?
        @Option var resolution: String?

        func validate() throws {
            guard status != nil || diagnosis != nil || resolution != nil else {
                throw ValidationError("give at least one of --status, --diagnosis, --resolution")
            }
        }

        func run() throws {
            let params = RPC.UpdateDevice.Params(
                id: id, status: status.map(FieldChange.set), diagnosis: diagnosis.map(FieldChange.set),
                resolution: resolution.map(FieldChange.set))
            let reply = try options.call(RPC.UpdateDevice.self, params)
            if !options.printJSONIfAsked(reply.json) { Output.line("device \(id) changed (queued)") }
        }
    }
}
