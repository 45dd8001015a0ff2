import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

extension ClientCommand {
    /// `repairctl client new --email E [--first-name …] [--client-id UUID]`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new", abstract: "Create a client here; it reaches the server with the next push.",
            discussion: """
                Works while the API is unreachable: the client is in the local replica at once and queued. With \
                --client-id (a lowercase UUID you choose), running the same command again is safe.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var client: ClientFields

        func run() throws {
            let reply = try options.call(RPC.CreateClient.self, try client.params())
            if options.printJSONIfAsked(reply.json) { return }
            Output.line("client \(reply.result.id) created (\(reply.result.email)); queued for the server")
        }
    }
}
