internal import Foundation

#if canImport(Glibc)
    internal import Glibc
#endif

/// A blocking client for the control socket, for `repairctl` (one short-lived process, one connection): sends a
/// request line, reads lines until the reply with its id arrives, handing any notification in between to
/// `onNotification`.
///
/// ```swift
/// let client = try ControlClient(path: "/run/repairsyncd/control.sock")
/// let status = try client.call("status")
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

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var nextId = 1
    private let parser = JSONParser(limits: .init(maxDepth: 1000, maxNumberLength: 10_000))

    public init(path: String) throws(Failure) {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
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

    /// Why a connect failed, as an admin would want to read it.
    static func explain(path: String, errno code: Int32) -> String {
        switch code {
        case ENOENT:
            let directory = (path as NSString).deletingLastPathComponent
            return FileManager.default.fileExists(atPath: directory)
                ? "repairsyncd is not running: no control socket at \(path) (start it with `systemctl start repairsyncd`)"
                : "repairsyncd is not running: \(directory) does not exist (start it with `systemctl start repairsyncd`, or pass --socket)"
        case EACCES, EPERM:
            return "permission denied on \(path): add your user to the socket's group (e.g. `usermod -aG repair $USER`, then log in again)"
        case ECONNREFUSED:
            return "repairsyncd is not running: \(path) exists but nobody answers (a stale socket; start the daemon)"
        default:
            return "cannot connect to \(path): \(String(cString: strerror(code)))"
        }
    }

    /// Calls `method` and returns its result; a JSON-RPC error is thrown as `.rpc`.
    public func call(
        _ method: String, _ params: JSONValue? = nil, onNotification: (String, JSONValue) -> Void = { _, _ in }
    ) throws(Failure) -> JSONValue {
        let id = nextId
        nextId += 1
        var members: [(key: String, value: JSONValue)] = [("jsonrpc", .string("2.0")), ("method", .string(method))]
        if let params { members.append(("params", params)) }
        members.append(("id", .number(id)))
        try send(JSONValue.object(members).serialized)
        while true {
            let message = try readMessage()
            if case .string(let name)? = message["method"], message["id"] == nil {
                onNotification(name, message["params"] ?? .null)
                continue
            }
            guard message["id"] == .number(id) else { continue }
            if let error = message["error"] {
                throw .rpc(
                    JSONRPCError(
                        code: error["code"]?.intValue ?? -32603, message: error["message"]?.stringValue ?? "unknown error",
                        data: error["data"]))
            }
            return message["result"] ?? .null
        }
    }

    /// Reads the next notification (after `subscribe`): its method and params.
    public func nextNotification() throws(Failure) -> (String, JSONValue) {
        while true {
            let message = try readMessage()
            if case .string(let name)? = message["method"] { return (name, message["params"] ?? .null) }
        }
    }

    private func send(_ line: String) throws(Failure) {
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .protocolError("write: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    private func readMessage() throws(Failure) -> JSONValue {
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
                throw .protocolError("read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { throw .protocolError("the daemon closed the connection") }
            buffer += chunk[..<count]
        }
    }
}
