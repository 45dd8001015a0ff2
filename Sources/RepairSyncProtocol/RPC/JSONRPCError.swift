/// The error codes of the control socket: JSON-RPC 2.0's own, and this daemon's (-32000…-32099). docs/rpc.md lists
/// them, and a test holds that list to this enum.
public enum ErrorCode: Int, Sendable, Hashable, CaseIterable {
    /// The line is not JSON (or not UTF-8).
    case parseError = -32700
    /// Not a request object, a bad member, an empty or oversized batch, a limit exceeded.
    case invalidRequest = -32600
    case methodNotFound = -32601
    /// A parameter is missing, of the wrong type, out of range, or not one the method takes (`data.param`).
    case invalidParams = -32602
    /// A bug: please report it with the daemon's log.
    case internalError = -32603
    /// No such record in the replica, change or conflict.
    case notFound = -32001
    /// The engine refuses a value (`data.field` names it), or a reloaded configuration is invalid.
    case invalidValue = -32002
    /// The local database refused (e.g. the disk is full); nothing acknowledged before was lost.
    case storeError = -32003
    /// The method is for root, the daemon's user and the socket's group.
    case unauthorizedPeer = -32004
    /// Too many connections, offline, or the daemon is shutting down: try again.
    case unavailable = -32005
}

/// A JSON-RPC 2.0 error object: a code (`ErrorCode` when it is one this version knows), a sentence, and data.
public struct JSONRPCError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public init(_ code: ErrorCode, _ message: String, data: JSONValue? = nil) {
        self.init(code: code.rawValue, message: message, data: data)
    }

    /// The code as this version knows it; nil for a code a newer daemon added.
    public var kind: ErrorCode? { ErrorCode(rawValue: code) }

    public var description: String { "\(code) \(message)" }

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("code", .number(code)), ("message", .string(message))]
        if let data { members.append(("data", data)) }
        return .object(members)
    }

    /// An error object as it arrives (a malformed one still becomes an error, never a crash).
    public init(json: JSONValue) {
        self.init(
            code: json["code"]?.intValue ?? ErrorCode.internalError.rawValue,
            message: json["message"]?.stringValue ?? "unknown error", data: json["data"])
    }

    // MARK: The specification's errors

    public static func parseError(_ detail: String) -> JSONRPCError {
        JSONRPCError(.parseError, "Parse error: \(detail)")
    }

    public static func invalidRequest(_ detail: String) -> JSONRPCError {
        JSONRPCError(.invalidRequest, "Invalid Request: \(detail)")
    }

    public static func methodNotFound(_ method: String) -> JSONRPCError {
        JSONRPCError(.methodNotFound, "Method not found: \(method)")
    }

    /// Names the parameter, in the message and as `data.param`.
    public static func invalidParams(_ param: String, _ detail: String) -> JSONRPCError {
        JSONRPCError(.invalidParams, "Invalid params: \(param) \(detail)", data: .object(["param": .string(param)]))
    }

    public static func internalError(_ detail: String) -> JSONRPCError {
        JSONRPCError(.internalError, "Internal error: \(detail)")
    }

    // MARK: This daemon's errors (docs/rpc.md)

    public static func notFound(_ detail: String) -> JSONRPCError { JSONRPCError(.notFound, detail) }

    /// Names the field, in the message and as `data.field`.
    public static func invalidValue(_ field: String, _ detail: String) -> JSONRPCError {
        JSONRPCError(.invalidValue, "\(field): \(detail)", data: .object(["field": .string(field)]))
    }

    public static func storeError(_ detail: String) -> JSONRPCError { JSONRPCError(.storeError, detail) }
    public static func unauthorizedPeer(_ detail: String) -> JSONRPCError { JSONRPCError(.unauthorizedPeer, detail) }
    public static func unavailable(_ detail: String) -> JSONRPCError { JSONRPCError(.unavailable, detail) }
}
