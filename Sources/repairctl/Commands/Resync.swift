import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl resync <collection>... [--wait]`.
struct Resync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resync",
        abstract: "Pull collections again from the beginning, removing what the server no longer has.",
        discussion: """
            For a collection suspected of having drifted from the server, without purging the store: the next run \
            pushes what is pending, forgets the collection's cursor, pulls every record again and removes the ones \
            the server says it no longer has (each checked first). Pending changes are kept.
            """)

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The collections to pull again.")
    var collections: [SyncCollection]
    @Flag(help: "Wait for the run to end (with a progress bar on a terminal); exit 1 if it failed.") var wait = false

    func run() throws {
        let client = try options.connect()
        let showProgress = wait && Output.isTerminal && !options.json
        if showProgress { _ = try options.call(RPC.Subscribe.self, client: client) }
        let reply: ControlClient.Reply<RPC.Resync.Result>
        do {
            reply = try client.exchange(RPC.Resync.self, .init(collections: collections, wait: wait ? true : nil)) {
                notification in
                guard showProgress, let status = notification.decode(RPC.StatusChanged.self) else { return }
                Sync.drawProgress(status)
            }
        } catch {
            if showProgress { Output.status("\r\u{1B}[K") }
            throw GlobalOptions.exit(error)
        }
        if showProgress { Output.status("\r\u{1B}[K") }
        try Sync.finish(reply, options: options, verb: "resync")
    }
}
