import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl sync [collection...] [--wait]`.
struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a sync now (push, then pull the collections named, or all).")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Collections to pull: clients, orders, devices, tickets, ticket_messages (default: all).")
    var collections: [String] = []
    @Flag(help: "Wait for the run to end (with a progress bar on a terminal); exit 1 if it failed.") var wait = false

    func run() throws {
        var params: [(key: String, value: JSONValue)] = []
        if !collections.isEmpty { params.append(("collections", .array(collections.map { .string($0) }))) }
        if wait { params.append(("wait", .bool(true))) }
        let client = try options.connect()
        let showProgress = wait && Output.isTerminal && !options.json
        if showProgress { _ = try options.call("subscribe", client: client) }
        let result: JSONValue
        do {
            result = try client.call("sync", .object(params)) { _, status in
                guard showProgress else { return }
                Self.drawProgress(status)
            }
        } catch {
            if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            Output.error(error.description)
            if case .protocolError = error { throw ExitCode(69) }
            throw ExitCode.failure
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if options.printJSONIfAsked(result) {
            if wait, result["stop"] != nil, result["stop"] != .null { throw ExitCode.failure }
            return
        }
        guard wait else {
            print("sync started")
            return
        }
        let pulled: Int =
            if case .object(let members)? = result["pulled"] { members.compactMap { $0.value.intValue }.reduce(0, +) } else { 0 }
        let summary = "pushed \(Output.cell(result["pushed"])), pulled \(pulled), deleted \(Output.cell(result["deleted"])), "
            + "conflicts \(Output.cell(result["conflicts"])) in \(Output.cell(result["durationMilliseconds"])) ms"
        if let stop = result["stop"]?.stringValue {
            print(Output.red("sync failed: \(stop)") + " (\(summary))")
            throw ExitCode.failure
        }
        print(Output.green("sync done: ") + summary)
    }

    static func drawProgress(_ status: JSONValue) {
        guard status["state"]?.stringValue == "syncing" else { return }
        let progress = Double(Output.cell(status["progress"])) ?? 0
        let width = 30
        let filled = Int(progress * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let step = status["step"]?.stringValue ?? ""
        FileHandle.standardError.write(Data("\r\(step.padding(toLength: 9, withPad: " ", startingAt: 0)) \(bar) \(Int(progress * 100)) %".utf8))
    }
}
