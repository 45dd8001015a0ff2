public import RepairSyncProtocol

/// Turns one line of the control socket into at most one line of reply, following JSON-RPC 2.0 exactly: single
/// requests and batches, notifications (no reply, even on error), and the spec's error codes. What each method
/// does is the `handler`'s business; this type only knows the protocol.
public struct JSONRPCDispatcher<Context: Sendable>: Sendable {
    /// Runs one method call. Throw a `JSONRPCError` for an error reply; any other error becomes -32603.
    public typealias Handler =
        @Sendable (_ method: String, _ params: JSONValue?, _ context: Context) async throws -> JSONValue

    public let parser: JSONParser
    public let maxBatch: Int
    let handler: Handler

    public init(parser: JSONParser = JSONParser(), maxBatch: Int = JSONRPCMessage.maxBatch, handler: @escaping Handler)
    {
        self.parser = parser
        self.maxBatch = maxBatch
        self.handler = handler
    }

    /// The reply line (without its newline) for one request line, or nil when nothing is to be sent back.
    public func reply(to line: some Collection<UInt8>, context: Context) async -> String? {
        let message: JSONValue
        do {
            message = try parser.parse(line)
        } catch {
            let rpcError: JSONRPCError =
                error.isSyntaxError ? .parseError(error.description) : .invalidRequest(error.description)
            return Self.response(id: .null, error: rpcError).serialized
        }
        switch message {
        case .array(let entries):
            guard !entries.isEmpty else {
                return Self.response(id: .null, error: .invalidRequest("an empty batch")).serialized
            }
            guard entries.count <= maxBatch else {
                return Self.response(id: .null, error: .invalidRequest("a batch of more than \(maxBatch) requests"))
                    .serialized
            }
            let replies = await callConcurrently(entries, context: context)
            return replies.isEmpty ? nil : JSONValue.array(replies).serialized
        default:
            return await call(message, context: context)?.serialized
        }
    }

    /// A batch's requests run concurrently, as JSON-RPC 2.0 allows ("in any order and with any width of
    /// parallelism"): changes in one batch share a commit instead of waiting for each other's. The replies keep the
    /// order of the requests (notifications have none). At most `maxBatch` at once.
    private func callConcurrently(_ entries: [JSONValue], context: Context) async -> [JSONValue] {
        await withTaskGroup(of: (Int, JSONValue?).self) { group in
            for (index, entry) in entries.enumerated() {
                group.addTask { (index, await call(entry, context: context)) }
            }
            var replies = [JSONValue?](repeating: nil, count: entries.count)
            for await (index, reply) in group { replies[index] = reply }
            return replies.compactMap { $0 }
        }
    }

    /// One request object: its response, or nil for a notification.
    private func call(_ request: JSONValue, context: Context) async -> JSONValue? {
        guard case .object = request else {
            return Self.response(
                id: .null, error: .invalidRequest("a request must be an object, not \(request.typeName)"))
        }
        let id = request["id"]
        let replyId: JSONValue
        switch id {
        case nil: replyId = .null
        case .null?, .string?, .number?: replyId = id!
        case let other?:
            return Self.response(
                id: .null, error: .invalidRequest("id must be a string, a number or null, not \(other.typeName)"))
        }
        guard request["jsonrpc"] == .string("2.0") else {
            return Self.response(id: replyId, error: .invalidRequest(#"jsonrpc must be "2.0""#))
        }
        guard case .string(let method)? = request["method"] else {
            return Self.response(id: replyId, error: .invalidRequest("method must be a string"))
        }
        if case .object(let members) = request,
            let unknown = members.first(where: { !["jsonrpc", "method", "params", "id"].contains($0.key) })
        {
            return Self.response(id: replyId, error: .invalidRequest("unknown member \(unknown.key)"))
        }
        let params = request["params"]
        switch params {
        case nil, .object?, .array?: break
        case let other?:
            return Self.response(
                id: replyId, error: .invalidRequest("params must be an object or an array, not \(other.typeName)"))
        }
        let isNotification = id == nil
        do {
            let result = try await handler(method, params, context)
            return isNotification ? nil : JSONRPCMessage.result(result, id: replyId)
        } catch let error as JSONRPCError {
            return isNotification ? nil : Self.response(id: replyId, error: error)
        } catch {
            return isNotification ? nil : Self.response(id: replyId, error: .internalError("\(error)"))
        }
    }

    static func response(id: JSONValue, error: JSONRPCError) -> JSONValue { JSONRPCMessage.error(error, id: id) }

    /// A notification the server sends on its own (e.g. `statusChanged`), as a line.
    public static func notification(_ method: String, params: JSONValue) -> String {
        JSONRPCMessage.notification(method: method, params: params).serialized
    }
}
