internal import Logging
internal import RepairSyncControlServer
internal import RepairSyncEngine
internal import RepairSyncProtocol
internal import RepairSyncStore

/// Dispatches the control socket's calls to the typed handlers: looks the method up, checks the caller's access,
/// decodes and validates the params (-32602 naming the parameter), logs every change with the caller (`ControlAudit`),
/// runs the handler, encodes its result, and maps what it throws to the documented error codes — each of these once,
/// here.
struct ControlRouter: Sendable {
    struct Route: Sendable {
        let access: Access
        let call: @Sendable (JSONValue?, ControlRequestContext) async throws -> JSONValue
    }

    private(set) var routes: [String: Route] = [:]
    let authorization: PeerAuthorization
    let logger: Logger
    let audit: ControlAudit
    /// Calls refused for want of access, logged within the same allowance per caller as changes.
    let refusals: ControlAudit

    init(authorization: PeerAuthorization, logger: Logger, audit: ControlAudit, refusals: ControlAudit) {
        self.authorization = authorization
        self.logger = logger
        self.audit = audit
        self.refusals = refusals
    }

    /// The router with every handler of `ControlHandlers.all`.
    init(services: ControlServices, authorization: PeerAuthorization, audit: ControlAudit, refusals: ControlAudit) {
        self.init(authorization: authorization, logger: services.logger, audit: audit, refusals: refusals)
        for handler in ControlHandlers.all { register(handler, services: services) }
    }

    mutating func register<H: ControlHandler>(_ type: H.Type, services: ControlServices) {
        let handler = H(services: services)
        let audit = audit
        let engine = services.engine
        routes[H.Method.name] = Route(access: H.Method.access) { params, context in
            if let params, let path = Self.nulPath(params) {
                // SQLite takes a bound string up to its first NUL: "ord_2\u0000x" would edit ord_2, a note would be
                // cut short on disk while the server got it whole.
                throw JSONRPCError.invalidParams(
                    path, "holds a NUL character (\\u0000), which the replica cannot store")
            }
            let decoded = try H.Method.Params.decode(from: params)
            if H.Method.access == .mutating {
                audit.record(
                    method: H.Method.name, subject: (decoded as? any AuditSubject)?.auditSubject ?? "",
                    peer: context.peer)
            }
            let result: H.Method.Result
            do {
                result = try await handler.handle(decoded, ControlRequest(context: context))
            } catch  where !(error is JSONRPCError) && (error is StoreClosing || engine.isClosing) {
                // A purge ended writing (or closed the store) under this call: the daemon is going away, which is
                // what the caller needs to know — not the closed store's errors, which read as damage.
                throw JSONRPCError.unavailable("the daemon is shutting down: its store is closed (a purge)")
            }
            return try JSONValueEncoder().encode(result)
        }
    }

    /// Where in `value` a string (or a key) holds U+0000: `notes`, `fields.notes`, `items[2]`; nil when none does.
    static func nulPath(_ value: JSONValue, at path: String = "params") -> String? {
        switch value {
        case .string(let text): return text.utf8.contains(0) ? path : nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = nulPath(item, at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let members):
            for (key, member) in members {
                let inner = path == "params" ? key : "\(path).\(key)"
                if key.utf8.contains(0) { return path }
                if let found = nulPath(member, at: inner) { return found }
            }
            return nil
        case .null, .bool, .number: return nil
        }
    }

    var dispatcher: JSONRPCDispatcher<ControlRequestContext> {
        JSONRPCDispatcher { method, params, context in
            guard let route = routes[method] else { throw JSONRPCError.methodNotFound(method) }
            guard authorization.allows(route.access, for: context.peer) else {
                refusals.record(method: method, subject: "", peer: context.peer)
                throw JSONRPCError.unauthorizedPeer(
                    "\(method) is for root, the daemon's user and members of the socket's group; uid \(context.peer.uid) may read the status only"
                )
            }
            do {
                return try await route.call(params, context)
            } catch {
                throw rpcError(error, method: method)
            }
        }
    }

    /// The documented code for what a handler threw.
    func rpcError(_ error: any Error, method: String) -> JSONRPCError {
        if let error = error as? JSONRPCError { return error }
        if let error = error as? EngineError {
            switch error {
            case .unknownRecord, .notFound: return .notFound(error.description)
            case .invalidValue(let field, let reason): return .invalidValue(field, reason)
            case .corruptOutbox: return .storeError(error.description)
            }
        }
        if let failure = StoreFailure.classify(error) {
            logger.error("store error in \(method)", metadata: ["error": "\(failure)"])
            return .storeError(failure.description)
        }
        if error is CancellationError { return .unavailable("the daemon is shutting down; try again when it is back") }
        logger.error("control method failed", metadata: ["method": "\(method)", "error": "\(error)"])
        return .internalError("\(error)")
    }
}
