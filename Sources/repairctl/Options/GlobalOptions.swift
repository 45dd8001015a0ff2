import ArgumentParser
import RepairSyncControlClient
import RepairSyncProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The options every subcommand shares, and the one way commands talk to the daemon.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The daemon's control socket (default: $REPAIRSYNCD_SOCKET or /run/repairsyncd/control.sock).",
            valueName: "path"))
    var socket: String?

    @Flag(help: "Print the result as JSON (the shapes are documented in docs/rpc.md).")
    var json = false

    var socketPath: String {
        socket ?? getenv("REPAIRSYNCD_SOCKET").map { String(cString: $0) } ?? "/run/repairsyncd/control.sock"
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

    /// Calls a method of the catalogue: its typed result and the JSON the daemon sent. A daemon error is printed and
    /// exits 1 (69 when the connection broke).
    func call<M: ControlMethod>(
        _ method: M.Type, _ params: M.Params, client: ControlClient? = nil,
        onNotification: (ControlClient.Notification) -> Void = { _ in }
    ) throws -> ControlClient.Reply<M.Result> {
        let client = try client ?? connect()
        client.setReplyTimeout(seconds: Self.replyTimeout(for: M.name))
        do {
            return try client.exchange(method, params, onNotification: onNotification)
        } catch {
            throw Self.exit(error)
        }
    }

    func call<M: ControlMethod>(_ method: M.Type, client: ControlClient? = nil) throws -> ControlClient.Reply<M.Result>
    where M.Params == NoParams {
        try call(method, NoParams(), client: client)
    }

    /// How long a call may go without a byte from the daemon before repairctl gives up (exit 69): a daemon that
    /// accepts and never answers (hung, or stopped with SIGSTOP) must not hang a script for good. None (0) for the
    /// calls that wait on purpose: `subscribe` (`watch`) and `sync`/`resync` (with `--wait`, the whole run); a
    /// doctor's checks of the API take up to a few request timeouts.
    static func replyTimeout(for method: String) -> Int {
        switch method {
        case "subscribe", "sync", "resync": 0
        case "doctor": 300
        default: 60
        }
    }

    /// Prints a failure and gives the exit status it means: 69 when the daemon could not be reached or its answer
    /// not read, 1 when it refused.
    static func exit(_ error: ControlClient.Failure) -> ExitCode {
        Output.error(error.description)
        switch error {
        case .rpc: return .failure
        case .unreachable, .protocolError: return ExitCode(69)
        }
    }

    /// Prints `json` when --json is set; returns whether it did.
    func printJSONIfAsked(_ json: JSONValue) -> Bool {
        guard self.json else { return false }
        Output.json(json.serialized)
        return true
    }
}
