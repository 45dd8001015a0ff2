import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl watch`: one line per status change until interrupted — for a person, a script (`--json`) or a
/// status bar (`--badge`: the badge, each time it changes). Lines are written at once, not buffered, so a status bar
/// reading a pipe sees them immediately.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one line per status change (Ctrl-C to stop); --badge for a status bar.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print only the badge (pending count, `offline`, or `!`), each time it changes.") var badge = false

    func run() throws {
        let client = try options.connect()
        let first = try options.call("status", client: client)
        var last = line(first)
        Self.emit(last)
        _ = try options.call("subscribe", client: client)
        while true {
            do {
                let (_, status) = try client.nextNotification()
                let next = line(status)
                if !badge || next != last { Self.emit(next) }
                last = next
            } catch {
                if badge {
                    Self.emit("offline")  // the daemon went away: say so rather than freeze the last count
                }
                Output.error(error.description)
                throw ExitCode(69)
            }
        }
    }

    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func line(_ status: JSONValue) -> String {
        if badge { return Status.badge(status) }
        if options.json { return status.serialized }
        var text = status["state"]?.stringValue ?? "?"
        if let step = status["step"]?.stringValue { text += " \(step) \(Output.cell(status["progress"]))" }
        if let message = status["message"]?.stringValue { text += " \(message)" }
        return "\(text) · \(Output.cell(status["pending"])) pending · \(Output.cell(status["openConflicts"])) conflicts"
    }
}
