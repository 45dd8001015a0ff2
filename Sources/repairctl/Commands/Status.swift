import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl status`: state, connectivity, last sync, counts; `--badge` for a status bar.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the sync status.")

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Print only what a status-bar badge needs: the pending count, `offline`, or `!` on error.")
    var badge = false

    func run() throws {
        if badge {
            // A badge must never break a status bar: print something and exit 0 even without the daemon.
            guard let client = try? ControlClient(path: options.socketPath), let status = try? client.call("status") else {
                print("offline")
                return
            }
            print(Self.badge(status))
            return
        }
        let status = try options.call("status")
        if options.printJSONIfAsked(status) { return }
        print(Self.render(status))
    }

    static func badge(_ status: JSONValue) -> String {
        switch status["state"]?.stringValue {
        case "error": "!"
        case "offline": "offline"
        default: Output.cell(status["pending"])
        }
    }

    /// "in 14 min (periodic)", or why nothing is planned.
    static func nextRun(_ next: JSONValue?) -> String {
        guard let next, next != .null, let at = next["at"]?.stringValue else { return "when the API is reachable again" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let reason = Output.cell(next["reason"])
        guard let date = formatter.date(from: at) else { return "\(at) (\(reason))" }
        let seconds = Int(date.timeIntervalSinceNow.rounded())
        let when =
            switch seconds {
            case ..<1: "now"
            case ..<60: "in \(seconds) s"
            case ..<3600: "in \(seconds / 60) min"
            default: "in \(seconds / 3600) h \(seconds % 3600 / 60) min"
            }
        return "\(when) (\(reason))"
    }

    static func render(_ status: JSONValue) -> String {
        let state = status["state"]?.stringValue ?? "?"
        var headline = state
        if state == "syncing", let step = status["step"]?.stringValue {
            let progress = Double(status["progress"].map(Output.cell) ?? "") ?? 0
            headline += " (\(step) \(Int(progress * 100)) %)"
        }
        if state == "error", let message = status["message"]?.stringValue { headline += ": \(message)" }
        let colouredState =
            switch state {
            case "error": Output.red(headline)
            case "offline": Output.yellow(headline)
            default: Output.green(headline)
            }
        var lines = [
            "state:      \(colouredState)\(status["paused"]?.boolValue == true ? " (automatic sync paused)" : "")",
            "network:    \(status["online"]?.boolValue == false ? Output.yellow("offline") : "online") "
                + "(probe: \(Output.cell(status["probe"])), changed \(Output.relative(status["lastOnlineChange"])))",
            "next sync:  \(Self.nextRun(status["nextRun"]))",
            "last sync:  \(Output.relative(status["lastSyncAt"])) (last success \(Output.relative(status["lastSuccessAt"])))",
            "changes:    \(Output.cell(status["pending"])) pending, \(Output.cell(status["failed"])) failed, "
                + "\(Output.cell(status["dead"])) dead, \(Output.cell(status["openConflicts"])) open conflicts",
        ]
        if let bytes = status["storeBytes"]?.intValue {
            var store = "store:      \(String(format: "%.1f", Double(bytes) / 1_048_576)) MiB"
            if let retention = status["retention"], retention != .null {
                let removed = ["orders", "devices", "tickets", "messages"].compactMap { retention[$0]?.intValue }.reduce(0, +)
                store += " (retention removed \(removed) old records \(Output.relative(retention["at"])))"
            }
            lines.append(store)
        }
        if case .array(let collections)? = status["collections"] {
            lines.append("")
            var rows: [[String]] = []
            for collection in collections {
                rows.append([
                    Output.cell(collection["collection"]), Output.cell(collection["records"]),
                    Output.relative(collection["lastSuccessAt"]), Output.cell(collection["lastError"]),
                ])
            }
            let header = ["collection", "records", "synced", "error"]
            var widths = header.map(\.count)
            for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
            let format = { (cells: [String]) in
                cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                    .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            }
            lines.append(format(header))
            lines += rows.map(format)
        }
        return lines.joined(separator: "\n")
    }
}
