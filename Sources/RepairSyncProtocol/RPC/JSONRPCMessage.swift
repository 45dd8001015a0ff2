/// The JSON-RPC 2.0 envelope, as the control socket writes and reads it: one message per line, members in the order
/// the specification lists them.
///
/// ```swift
/// JSONRPCMessage.request(method: "ping", params: nil, id: .number(1)).serialized
/// // {"jsonrpc":"2.0","method":"ping","id":1}
/// ```
public enum JSONRPCMessage {
    /// The most requests one batch may hold: the daemon refuses a larger one (`-32600`), and clients split theirs.
    public static let maxBatch = 100

    public static func request(method: String, params: JSONValue?, id: JSONValue?) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("jsonrpc", .string("2.0")), ("method", .string(method))]
        if let params { members.append(("params", params)) }
        if let id { members.append(("id", id)) }
        return .object(members)
    }

    public static func result(_ result: JSONValue, id: JSONValue) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("result", result), ("id", id)])
    }

    public static func error(_ error: JSONRPCError, id: JSONValue) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("error", error.json), ("id", id)])
    }

    /// A notification the server sends on its own (`statusChanged`, `backupChunk`).
    public static func notification(method: String, params: JSONValue) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("method", .string(method)), ("params", params)])
    }

    /// What a client reads on its connection.
    public enum Incoming: Sendable, Hashable {
        case response(id: JSONValue, Result<JSONValue, JSONRPCError>)
        case notification(method: String, params: JSONValue)
    }

    /// A response (with its id) or a notification; nil for anything else.
    public static func incoming(_ message: JSONValue) -> Incoming? {
        if case .string(let method)? = message["method"], message["id"] == nil {
            return .notification(method: method, params: message["params"] ?? .null)
        }
        guard let id = message["id"] else { return nil }
        if let error = message["error"] { return .response(id: id, .failure(JSONRPCError(json: error))) }
        return .response(id: id, .success(message["result"] ?? .null))
    }
}
