import ArgumentParser
import Foundation
import RepairSyncControl

/// `repairctl pending [--failed]`.
struct Pending: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List local changes not yet on the server.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Only changes that failed and wait for a retry, or are dead.") var failed = false

    func run() throws {
        let result = try options.call("pending")
        guard case .array(var entries) = result else { return }
        if failed { entries = entries.filter { ["failed", "dead"].contains($0["state"]?.stringValue ?? "") } }
        if options.printJSONIfAsked(.array(entries)) { return }
        Output.table(
            ["seq", "state", "record", "fields", "attempts", "last error"],
            entries.map { entry in
                let fields: String =
                    if case .object(let members)? = entry["fields"] { members.map(\.key).sorted().joined(separator: ",") } else { "" }
                return [
                    Output.cell(entry["seq"]), Output.cell(entry["state"]),
                    "\(Output.cell(entry["collection"]))/\(Output.cell(entry["record_id"]))", fields,
                    Output.cell(entry["attempts"]), Output.cell(entry["last_error"]),
                ]
            })
    }
}

/// `repairctl retry [seq...]`.
struct Retry: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Retry dead changes (all, or the ones named by seq).")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Change numbers (seq) from `repairctl pending`.") var ids: [Int] = []

    func run() throws {
        let params: JSONValue = ids.isEmpty ? .object([]) : .object(["ids": .array(ids.map { .number($0) })])
        let result = try options.call("retry", params)
        if options.printJSONIfAsked(result) { return }
        print("\(Output.cell(result["retried"])) change(s) queued again")
    }
}

/// `repairctl conflicts [--all]`.
struct Conflicts: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List conflicts waiting for a decision (--all: the audit log).")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "The whole audit log, resolved ones included.") var all = false

    func run() throws {
        let result = try options.call("conflicts", .object(["open": .bool(!all)]))
        if options.printJSONIfAsked(result) { return }
        guard case .array(let conflicts) = result else { return }
        Output.table(
            ["id", "record", "fields", "local", "remote", "policy", "outcome"],
            conflicts.map { conflict in
                let fields: [String] =
                    if case .array(let values)? = conflict["fields"] { values.compactMap(\.stringValue) } else { [] }
                return [
                    Output.cell(conflict["id"]), "\(Output.cell(conflict["collection"]))/\(Output.cell(conflict["record_id"]))",
                    fields.joined(separator: ","), fields.map { Output.cell(conflict["local"]?[$0]) }.joined(separator: " | "),
                    fields.map { Output.cell(conflict["remote"]?[$0]) }.joined(separator: " | "),
                    Output.cell(conflict["policy"]), Output.cell(conflict["outcome"]),
                ]
            }, width: 32)
    }
}

/// `repairctl resolve <id> --keep local|remote`.
struct Resolve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Decide an open conflict.")

    enum Side: String, ExpressibleByArgument, CaseIterable { case local, remote }

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The conflict's id from `repairctl conflicts`.") var id: Int
    @Option(help: "Which side's values to keep.") var keep: Side

    func run() throws {
        let result = try options.call("resolveConflict", .object(["id": .number(id), "keep": .string(keep.rawValue)]))
        if options.printJSONIfAsked(result) { return }
        print("conflict \(id) resolved: kept \(keep.rawValue)")
    }
}

/// `repairctl pause`.
struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pause automatic sync (manual syncs still run).")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let result = try options.call("pause")
        if !options.printJSONIfAsked(result) { print("automatic sync paused") }
    }
}

/// `repairctl resume`.
struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Resume automatic sync.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let result = try options.call("resume")
        if !options.printJSONIfAsked(result) { print("automatic sync resumed") }
    }
}

/// `repairctl reload`.
struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Reload the daemon's configuration (like SIGHUP).")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let result = try options.call("reload")
        if !options.printJSONIfAsked(result) { print("configuration reloaded") }
    }
}

/// `repairctl ping`.
struct Ping: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check that the daemon answers.")
    @OptionGroup var options: GlobalOptions

    func run() throws {
        let result = try options.call("ping")
        if !options.printJSONIfAsked(result) { print(Output.cell(result)) }
    }
}
