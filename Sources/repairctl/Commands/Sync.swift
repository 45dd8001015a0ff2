import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl sync [collection...] [--wait]`.
struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Start a sync now (push, then pull the collections named, or all).")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Collections to pull (default: all).")
    var collections: [SyncCollection] = []
    @Flag(help: "Wait for the run to end (with a progress bar on a terminal); exit 1 if it failed.") var wait = false

    func run() throws {
        let client = try options.connect()
        let showProgress = wait && Output.isTerminal && !options.json
        if showProgress { _ = try options.call(RPC.Subscribe.self, client: client) }
        let params = RPC.Sync.Params(collections: collections.isEmpty ? nil : collections, wait: wait ? true : nil)
        let reply: ControlClient.Reply<RPC.Sync.Result>
        do {
            reply = try client.exchange(RPC.Sync.self, params) { notification in
                guard showProgress, let status = notification.decode(RPC.StatusChanged.self) else { return }
                Self.drawProgress(status)
            }
        } catch {
            if showProgress { Output.status("\r\u{1B}[K") }
            throw GlobalOptions.exit(error)
        }
        if showProgress { Output.status("\r\u{1B}[K") }
        try Self.finish(reply, options: options, verb: "sync")
    }

    /// Prints a `sync` or `resync` answer: "started", or the run's summary (exit 1 when it failed).
    static func finish(_ reply: ControlClient.Reply<RPC.Sync.Result>, options: GlobalOptions, verb: String) throws {
        let report: SyncRunReport? = if case .finished(let report) = reply.result { report } else { nil }
        if options.printJSONIfAsked(reply.json) {
            if report?.succeeded == false { throw ExitCode.failure }
            return
        }
        guard let report else {
            Output.line("\(verb) started")
            return
        }
        let summary =
            "pushed \(report.pushed), pulled \(report.pulled.values.reduce(0, +)), deleted \(report.deleted), "
            + "conflicts \(report.conflicts) in \(report.durationMilliseconds) ms"
        if let stop = report.stop {
            Output.line(Output.red("\(verb) failed: \(stop)") + " (\(summary))")
            throw ExitCode.failure
        }
        Output.line(Output.green("\(verb) done: ") + TerminalText(summary))
    }

    static func drawProgress(_ status: StatusSnapshot) {
        guard status.state == .syncing else { return }
        let percent = (status.progress?.thousandths ?? 0) / 10
        let width = 30
        let filled = percent * width / 100
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        Output.status("\r\(Output.pad(status.step ?? "", 9)) \(bar) \(percent) %")
    }
}
