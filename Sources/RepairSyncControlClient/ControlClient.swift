public import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// A blocking client for the control socket, for `repairctl` and other short-lived tools (one process, one
/// connection): sends a request line, reads lines until the reply with its id arrives, handing any notification
/// in between to `onNotification`. Links nothing but the protocol and the C library.
///
/// ```swift
/// let client = try ControlClient(path: "/run/repairsyncd/control.sock")
/// let status = try client.call(RPC.Status.self)
/// print(status.pending)
/// ```
public final class ControlClient {
    public enum Failure: Error, CustomStringConvertible {
        /// The daemon cannot be reached, in one sentence that says why and what to check.
        case unreachable(String)
        /// The daemon answered with a JSON-RPC error.
        case rpc(JSONRPCError)
        /// The connection broke or the daemon sent something that is not a reply.
        case protocolError(String)

        public var description: String {
            switch self {
            case .unreachable(let sentence): sentence
            case .rpc(let error): error.message
            case .protocolError(let detail): "the daemon's reply could not be read: \(detail)"
            }
        }
    }

    /// A notification that arrived on the connection: its method and params.
    public struct Notification: Sendable {
        public var method: String
        public var params: JSONValue

        /// The params as `N` says, when this is an `N` notification.
        public func decode<N: ControlNotification>(_ notification: N.Type) -> N.Params? {
            guard method == N.name else { return nil }
            return try? JSONValueDecoder().decode(N.Params.self, from: params)
        }
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var nextId = 1
    private let parser = JSONParser(limits: .init(maxDepth: 1000, maxNumberLength: 10_000))

    public init(path: String) throws(Failure) {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .unreachable("cannot create a socket: \(String(cString: strerror(errno)))") }
        let descriptor = descriptor
        guard let result = UnixSocketAddress.with(path, { connect(descriptor, $0, $1) }) else {
            close(descriptor)
            throw .unreachable("the socket path \(path) is too long")
        }
        if result != 0 {
            let code = errno
            close(descriptor)
            throw .unreachable(Self.explain(path: path, errno: code))
        }
    }

    deinit { close(descriptor) }

    /// Ends the connection both ways; callable from another thread: a `call` or `nextNotification` blocked on it
    /// returns with `.protocolError`. (The descriptor itself is closed when the client goes.)
    public func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Gives up on a reply (or the next notification) after `seconds` without a byte from the daemon, with
    /// `.protocolError` (default: waits as long as the daemon takes, e.g. for a `sync` with `wait`).
    public func setReplyTimeout(seconds: Int) {
        replyTimeout = seconds
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    private var replyTimeout: Int?

    /// Why a connect failed, as an admin would want to read it.
    static func explain(path: String, errno code: Int32) -> String {
        switch code {
        case ENOENT:
            let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
                separator: "/")
            return access(directory.isEmpty ? "/" : directory, F_OK) == 0
                ? "repairsyncd is not running: no control socket at \(path) (start it with `systemctl start repairsyncd`)"
                : "repairsyncd is not running: \(directory) does not exist (start it with `systemctl start repairsyncd`, or pass --socket)"
        case EACCES, EPERM:
            return
                "permission denied on \(path): add your user to the socket's group (e.g. `usermod -aG repair $USER`, then log in again)"
        case ECONNREFUSED:
            return "repairsyncd is not running: \(path) exists but nobody answers (a stale socket; start the daemon)"
        default:
            return "cannot connect to \(path): \(String(cString: strerror(code)))"
        }
    }

    // MARK: Typed calls (the catalogue's methods)

    /// A typed result with the JSON it was read from (to print what the daemon said, unknown members included).
    public struct Reply<Result: Sendable>: Sendable {
        public var result: Result
        public var json: JSONValue
    }

    /// Calls `method` and returns its typed result; a JSON-RPC error is thrown as `.rpc`.
    public func call<M: ControlMethod>(
        _ method: M.Type, _ params: M.Params, onNotification: (Notification) -> Void = { _ in }
    ) throws(Failure) -> M.Result {
        try exchange(method, params, onNotification: onNotification).result
    }

    /// Calls `method` and returns its typed result with the JSON the daemon sent.
    public func exchange<M: ControlMethod>(
        _ method: M.Type, _ params: M.Params, onNotification: (Notification) -> Void = { _ in }
    ) throws(Failure) -> Reply<M.Result> {
        let json = try send(M.name, try Self.encode(method, params), onNotification: onNotification)
        do {
            return Reply(result: try JSONValueDecoder().decode(M.Result.self, from: json), json: json)
        } catch {
            throw .protocolError(
                "the result of \(M.name) is not what this client expects (\(error)); is the daemon another version?")
        }
    }

    /// Calls `method` once for each of `params` in one batch — one line, one reply line — and returns each call's
    /// outcome in the order of `params`. The daemon runs a batch's calls concurrently (so changes queued together
    /// share one commit) and takes at most `JSONRPCMessage.maxBatch` (100) in one batch; the calls must not depend on each other's order.
    public func callBatch<M: ControlMethod>(_ method: M.Type, _ params: [M.Params]) throws(Failure)
        -> [Swift.Result<M.Result, JSONRPCError>]
    {
        guard !params.isEmpty else { return [] }
        var requests: [JSONValue] = []
        var ids: [JSONValue] = []
        for each in params {
            let encoded = try Self.encode(method, each)
            let id = JSONValue.number(nextId)
            nextId += 1
            ids.append(id)
            requests.append(JSONRPCMessage.request(method: M.name, params: encoded, id: id))
        }
        try write(JSONValue.array(requests).serialized)
        while true {
            let message = try readMessage(waitingFor: "reply to a batch of `\(M.name)`")
            if case .array(let replies) = message {
                var outcomes: [JSONValue: Swift.Result<JSONValue, JSONRPCError>] = [:]
                for reply in replies {
                    if case .response(let id, let outcome)? = JSONRPCMessage.incoming(reply) { outcomes[id] = outcome }
                }
                return try ids.map { id throws(Failure) in
                    switch outcomes[id] {
                    case .success(let json)?:
                        do {
                            return .success(try JSONValueDecoder().decode(M.Result.self, from: json))
                        } catch {
                            throw .protocolError("a result of \(M.name) is not what this client expects (\(error))")
                        }
                    case .failure(let error)?: return .failure(error)
                    case nil: throw .protocolError("the batch reply has no answer for request \(id)")
                    }
                }
            }
            // A single reply here is the daemon refusing the whole line (e.g. a batch over its limit).
            if case .response(_, .failure(let error))? = JSONRPCMessage.incoming(message) { throw .rpc(error) }
        }
    }

    /// `params` validated (as the daemon will) and encoded.
    private static func encode<M: ControlMethod>(_ method: M.Type, _ params: M.Params) throws(Failure) -> JSONValue? {
        do {
            try params.validate()
            return try params.encoded()
        } catch let error as JSONRPCError {
            throw .rpc(error)
        } catch {
            throw .protocolError("the params of \(M.name) could not be encoded: \(error)")
        }
    }

    /// Calls the view's method (it takes no params) and decodes only the view's members of the result.
    public func call<View: ControlResultView>(_ view: View.Type) throws(Failure) -> View
    where View.Method.Params == NoParams {
        let json = try send(View.Method.name, nil) { _ in }
        do {
            return try JSONValueDecoder().decode(View.self, from: json)
        } catch {
            throw .protocolError("the result of \(View.Method.name) is not what this client expects (\(error))")
        }
    }

    /// Calls a method that takes no params.
    public func call<M: ControlMethod>(_ method: M.Type, onNotification: (Notification) -> Void = { _ in })
        throws(Failure)
        -> M.Result where M.Params == NoParams
    {
        try call(method, NoParams(), onNotification: onNotification)
    }

    /// Reads the next notification (after `subscribe`).
    public func nextNotification() throws(Failure) -> Notification {
        while true {
            let message = try readMessage(waitingFor: "notification")
            if case .notification(let method, let params)? = JSONRPCMessage.incoming(message) {
                return Notification(method: method, params: params)
            }
        }
    }

    // MARK: Untyped calls (tools that test the protocol itself)

    /// Calls a method by name with raw params and returns the raw result. For tests and tools that exercise the
    /// protocol itself; `repairctl` uses the typed `call`.
    public func call(
        _ method: String, _ params: JSONValue? = nil, onNotification: (String, JSONValue) -> Void = { _, _ in }
    ) throws(Failure) -> JSONValue {
        try send(method, params) { onNotification($0.method, $0.params) }
    }

    private func send(_ method: String, _ params: JSONValue?, onNotification: (Notification) -> Void) throws(Failure)
        -> JSONValue
    {
        let id = JSONValue.number(nextId)
        nextId += 1
        try write(JSONRPCMessage.request(method: method, params: params, id: id).serialized)
        while true {
            switch JSONRPCMessage.incoming(try readMessage(waitingFor: "reply to `\(method)`")) {
            case .notification(let name, let params)?:
                onNotification(Notification(method: name, params: params))
            case .response(let replyId, let outcome)? where replyId == id:
                switch outcome {
                case .success(let result): return result
                case .failure(let error): throw .rpc(error)
                }
            case .response(.null, .failure(let error))?:
                // The daemon's answer to a line it would not take (a connection over its limits, a line too long):
                // the error has no id to carry (JSON-RPC 2.0, section 5), and it is the answer to this call.
                throw .rpc(error)
            default:
                continue
            }
        }
    }

    private func write(_ line: String) throws(Failure) {
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            // MSG_NOSIGNAL: a daemon that closed first is an error to report, not a SIGPIPE that kills the caller.
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                // It may have said why before it closed (a connection over its limits): that is the answer.
                if code == EPIPE || code == ECONNRESET, let refusal = try? readMessage(waitingFor: "refusal"),
                    case .response(.null, .failure(let error))? = JSONRPCMessage.incoming(refusal)
                {
                    throw .rpc(error)
                }
                throw .protocolError("write: \(String(cString: strerror(code)))")
            }
            sent += count
        }
    }

    private func readMessage(waitingFor awaited: String) throws(Failure) -> JSONValue {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[..<newline]
                defer { buffer.removeSubrange(...newline) }
                do {
                    return try parser.parse(line)
                } catch {
                    throw .protocolError("\(error)")
                }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK, let replyTimeout {
                    throw .protocolError("no \(awaited) within \(replyTimeout) s")
                }
                throw .protocolError("read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { throw .protocolError("the daemon closed the connection") }
            buffer += chunk[..<count]
        }
    }
}
