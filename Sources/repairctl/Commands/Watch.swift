import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl watch`: one line per status change until interrupted — for a person, a script (`--json`) or a
/// status bar (`--badge`: the badge, each time it changes). Lines are written at once, not buffered, so a status bar
/// reading a pipe sees them immediately.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print one line per status change (Ctrl-C to stop); --badge for a status bar.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print only the badge (pending count, `offline`, or `!`), each time it changes.") var badge = false

    func run() throws {
        let client = try options.connect()
        let first = try options.call(RPC.Status.self, client: client)
        var last = line(first.result, json: first.json)
        write(last)
        _ = try options.call(RPC.Subscribe.self, client: client)
        while true {
            do {
                let notification = try client.nextNotification()
                guard let status = notification.decode(RPC.StatusChanged.self) else { continue }
                let next = line(status, json: notification.params)
                if !badge || next != last { write(next) }
                last = next
            } catch {
                // The daemon went away: a bar says so rather than freeze the last count.
                if badge { Output.line("offline") }
                Output.error(error.description)
                throw ExitCode(69)
            }
        }
    }

    /// The line for a status: the badge, the JSON document, or a sentence whose daemon message (the server's or a
    /// proxy's words, perhaps) stays on its one line and is shown, not obeyed, by the terminal.
    func line(_ status: StatusSnapshot, json: JSONValue) -> String {
        if badge { return status.badge.text }
        if options.json { return json.serialized }
        var text = status.state.rawValue
        if let step = status.step { text += " \(step) \(status.progress?.description ?? "")" }
        if let message = status.message { text += " \(message)" }
        return "\(Output.cell(text)) · \(status.pending) pending · \(status.openConflicts) conflicts"
    }

    /// A JSON document as serialized; anything else made safe.
    func write(_ line: String) {
        if options.json && !badge { Output.json(line) } else { Output.line(TerminalText(line)) }
    }
}
