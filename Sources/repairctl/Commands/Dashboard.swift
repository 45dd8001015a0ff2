import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl dashboard [--period P]`.
struct Dashboard: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard", abstract: "Show the cached dashboard figures.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "today, week or month.") var period = RPC.DashboardStats.Period.today

    func run() throws {
        let reply = try options.call(RPC.DashboardStats.self, .init(period: period))
        if options.printJSONIfAsked(reply.json) { return }
        let stats = reply.result.stats
        Output.line(
            Output.bold("Dashboard · \(period.rawValue)") + " (as of \(Output.relative(reply.result.fetchedAt)))")
        for (name, value) in [
            ("devices", String(stats.devices.current)), ("revenue", stats.revenue.current.displayText),
            ("clients", String(stats.clients.current)), ("new clients", String(stats.newClients.current)),
            ("returning clients", String(stats.returningClients.current)),
        ] {
            Output.line("\(Output.pad(name, 18)) \(value)")
        }
    }
}
