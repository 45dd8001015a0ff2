import ArgumentParser
import Foundation
import RepairSyncControl

/// The options every subcommand shares.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The daemon's control socket (default: $REPAIRSYNCD_SOCKET or /run/repairsyncd/control.sock).", valueName: "path"))
    var socket: String?

    @Flag(help: "Print the result as JSON (the shapes are documented in docs/rpc.md).")
    var json = false

    var socketPath: String {
        socket ?? ProcessInfo.processInfo.environment["REPAIRSYNCD_SOCKET"] ?? "/run/repairsyncd/control.sock"
    }

    /// Connects, or exits 69 with one sentence on why the daemon cannot be reached.
    func connect() throws -> ControlClient {
        do {
            return try ControlClient(path: socketPath)
        } catch {
            Output.error(error.description)
            throw ExitCode(69)
        }
    }

    /// Calls a method; a daemon error is printed and exits 1 (69 if the connection broke).
    func call(_ method: String, _ params: JSONValue? = nil, client: ControlClient? = nil) throws -> JSONValue {
        let client = try client ?? connect()
        do {
            return try client.call(method, params)
        } catch {
            Output.error(error.description)
            if case .protocolError = error { throw ExitCode(69) }
            throw ExitCode.failure
        }
    }

    /// Prints `value` as JSON when --json is set; returns whether it did.
    func printJSONIfAsked(_ value: JSONValue) -> Bool {
        guard json else { return false }
        print(value.serialized)
        return true
    }
}
