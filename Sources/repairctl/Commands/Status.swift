import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

/// `repairctl status`: state, connectivity, last sync, counts; `--badge` for a status bar.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the sync status.")

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Print only what a status-bar badge needs: the pending count, `offline`, or `!` on error.")
    var badge = false

    func run() throws {
        if badge {
            // The usual command lines never get here (see StatusBadge); `--badge --json` and the like do.
            Output.line(TerminalText(StatusBadge.line(socket: options.socketPath)))
            return
        }
        let reply = try options.call(RPC.Status.self)
        if options.printJSONIfAsked(reply.json) { return }
        for line in Self.render(reply.result) { Output.line(line) }
    }

    /// "in 14 min (periodic)", or why nothing is planned.
    static func nextRun(_ status: StatusSnapshot) -> String {
        guard let next = status.nextRun else {
            if !status.online { return "when the API is reachable again" }
            return status.paused ? "none while paused (`repairctl sync` still runs one)" : "none planned"
        }
        return "\(Output.until(next.at)) (\(next.reason ?? "?"))"
    }

    /// The server's change stream in one phrase (nil from a daemon that does not report it).
    static func serverPush(_ status: StatusSnapshot) -> String? {
        switch status.events {
        case "connected"?: "server push connected"
        case "connecting"?: "server push connecting"
        case "unavailable"?: "no server push (periodic sync only)"
        case "off"?: "server push off"
        case let other?: "server push \(other)"
        case nil: nil
        }
    }

    /// ", slow link: 850 ms, 60 KB/s" (in yellow when slow), or nothing before the link was measured.
    static func link(_ link: StatusSnapshot.Link?) -> TerminalText {
        guard let link else { return "" }
        var figures: [String] = []
        if let rtt = link.rttMs { figures.append("\(rtt) ms") }
        if let rate = link.throughputBytesPerSecond { figures.append(Self.rate(rate)) }
        let text = TerminalText(
            "\(link.quality) link" + (figures.isEmpty ? "" : ": " + figures.joined(separator: ", ")))
        return ", " + (link.quality == "good" ? text : Output.yellow(text))
    }

    /// Decimal units, as link speeds are quoted: "850 B/s", "60 KB/s", "1.2 MB/s".
    static func rate(_ bytesPerSecond: Int64) -> String {
        switch bytesPerSecond {
        case ..<1000: "\(bytesPerSecond) B/s"
        case ..<1_000_000: "\(bytesPerSecond / 1000) KB/s"
        default: "\(bytesPerSecond / 100_000 / 10).\(bytesPerSecond / 100_000 % 10) MB/s"
        }
    }

    /// The status as people read it; the daemon's message (often the server's or a proxy's words) on the headline's
    /// one line.
    static func render(_ status: StatusSnapshot) -> [TerminalText] {
        var headline = status.state.rawValue
        if status.state == .syncing, let step = status.step {
            headline += " (\(step) \((status.progress?.thousandths ?? 0) / 10) %)"
        }
        if status.state == .error, let message = status.message { headline += ": \(message)" }
        let plain = TerminalText(Output.cell(headline))
        let coloured =
            switch status.state {
            case .error: Output.red(plain)
            case .offline: Output.yellow(plain)
            default: Output.green(plain)
            }
        var lines: [TerminalText] = [
            "state:      \(coloured)\(status.paused ? " (automatic sync paused)" : "")",
            "network:    \(status.online ? "online" + Self.link(status.link) : Output.yellow("offline")) "
                + "(probe: \(status.probe), changed \(Output.relative(status.lastOnlineChange)))"
                + TerminalText(serverPush(status).map { "; \($0)" } ?? ""),
            "next sync:  \(nextRun(status))",
            "last sync:  \(Output.relative(status.lastSyncAt)) (last success \(Output.relative(status.lastSuccessAt)))",
            "changes:    \(status.pending) pending, \(status.failed) failed, \(status.dead) dead, "
                + "\(status.openConflicts) open conflicts",
        ]
        var store = "store:      \(Output.mebibytes(status.storeBytes))"
        if let retention = status.retention {
            let conflicts = retention.conflicts > 0 ? " and \(retention.conflicts) resolved conflicts" : ""
            store +=
                " (retention removed \(retention.removed) old records\(conflicts) \(Output.relative(retention.at)))"
        }
        lines.append(TerminalText(store))
        lines.append("")
        let header = ["collection", "records", "synced", "error"]
        let rows = status.collections.map { collection in
            [
                Output.cell(collection.collection), String(collection.records),
                Output.relative(collection.lastSuccessAt),
                Output.cell(collection.lastError),
            ]
        }
        var widths = header.map(\.count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func format(_ cells: [String]) -> String {
            var text = cells.enumerated().map { Output.pad($1, widths[$0]) }.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            return text
        }
        lines.append(TerminalText(format(header)))
        lines += rows.map { TerminalText(format($0)) }
        return lines
    }
}
