/// A JSON-RPC 2.0 error object. The spec's codes, and the application codes of this daemon (-32000…-32099, listed
/// in docs/rpc.md).
public struct JSONRPCError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var description: String { "\(code) \(message)" }

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("code", .number(code)), ("message", .string(message))]
        if let data { members.append(("data", data)) }
        return .object(members)
    }

    // MARK: The specification's errors

    public static func parseError(_ detail: String) -> JSONRPCError {
        JSONRPCError(code: -32700, message: "Parse error: \(detail)")
    }

    public static func invalidRequest(_ detail: String) -> JSONRPCError {
        JSONRPCError(code: -32600, message: "Invalid Request: \(detail)")
    }

    public static func methodNotFound(_ method: String) -> JSONRPCError {
        JSONRPCError(code: -32601, message: "Method not found: \(method)")
    }

    /// Names the parameter, in the message and as `data.param`.
    public static func invalidParams(_ param: String, _ detail: String) -> JSONRPCError {
        JSONRPCError(
            code: -32602, message: "Invalid params: \(param) \(detail)", data: .object(["param": .string(param)]))
    }

    public static func internalError(_ detail: String) -> JSONRPCError {
        JSONRPCError(code: -32603, message: "Internal error: \(detail)")
    }

    // MARK: This daemon's errors (docs/rpc.md)

    /// A record, change or conflict that does not exist.
    public static func notFound(_ detail: String) -> JSONRPCError { JSONRPCError(code: -32001, message: detail) }
    /// A value the engine refuses (e.g. an unknown status), naming the field.
    public static func invalidValue(_ field: String, _ detail: String) -> JSONRPCError {
        JSONRPCError(code: -32002, message: "\(field): \(detail)", data: .object(["field": .string(field)]))
    }
    /// The store could not be read or written (e.g. the disk is full); nothing acknowledged was lost.
    public static func storeError(_ detail: String) -> JSONRPCError { JSONRPCError(code: -32003, message: detail) }
    /// The caller is not allowed to use this method.
    public static func unauthorizedPeer(_ detail: String) -> JSONRPCError { JSONRPCError(code: -32004, message: detail) }
    /// The daemon is busy or shutting down; try again.
    public static func unavailable(_ detail: String) -> JSONRPCError { JSONRPCError(code: -32005, message: detail) }
}
