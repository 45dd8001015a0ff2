import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl watch`: one line per status change until interrupted.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print one line per status change (Ctrl-C to stop).")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let client = try options.connect()
        let first = try options.call("status", client: client)
        print(line(first))
        _ = try options.call("subscribe", client: client)
        while true {
            do {
                let (_, status) = try client.nextNotification()
                print(line(status))
            } catch {
                Output.error(error.description)
                throw ExitCode(69)
            }
        }
    }

    func line(_ status: JSONValue) -> String {
        if options.json { return status.serialized }
        var text = status["state"]?.stringValue ?? "?"
        if let step = status["step"]?.stringValue { text += " \(step) \(Output.cell(status["progress"]))" }
        if let message = status["message"]?.stringValue { text += " \(message)" }
        return "\(text) · \(Output.cell(status["pending"])) pending · \(Output.cell(status["openConflicts"])) conflicts"
    }
}
