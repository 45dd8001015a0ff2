/// One method of the control socket: its name, who may call it, what it takes and what it answers. Both ends use
/// the same type — the daemon registers a handler for it, `repairctl` calls it — so a name is spelled once.
///
/// ```swift
/// let status = try client.call(RPC.Status.self)            // RPC.Status.Result
/// let entry = try client.call(RPC.UpdateOrder.self, .init(id: "ord_1", notes: .set("ready Friday")))
/// ```
public protocol ControlMethod: Sendable {
    associatedtype Params: ControlParams = NoParams
    associatedtype Result: Codable & Sendable

    /// The method's name on the wire.
    static var name: String { get }
    /// Who may call it.
    static var access: Access { get }
}

/// Who may call a method. Everyone who can connect may call an `open` one; `group` and `mutating` ones are for root,
/// the daemon's user and members of the socket's group; a `mutating` call is also written to the daemon's log with
/// the caller's uid and pid.
public enum Access: String, Sendable, Hashable, CaseIterable {
    /// The sync status and counts: anyone who can open the socket.
    case open
    /// The shop's records and the daemon's checks: the socket's group.
    case group
    /// Changes: the socket's group, each call logged.
    case mutating
}

/// A method's named parameters: `Codable` with `CodingKeys` that list every name (unknown names are refused with
/// -32602, so a typo is an error rather than an option silently ignored).
public protocol ControlParams: Codable, Sendable {
    associatedtype CodingKeys: CodingKey & CaseIterable

    /// Checks what the types cannot say (ranges, one of two), throwing -32602 naming the parameter. Called by the
    /// daemon after decoding, and by a client before sending.
    func validate() throws(JSONRPCError)
}

extension ControlParams {
    public func validate() throws(JSONRPCError) {}

    /// The parameter names, as docs/rpc.md lists them. A closure, not `\.stringValue`: a key path over a generic
    /// type is instantiated at run time on every use (its type looked up by mangled name), and every request's
    /// params are checked against these names — 2 % of the daemon's CPU while clients queued changes.
    public static var names: [String] { CodingKeys.allCases.map { $0.stringValue } }
}

/// The params of a method that takes none (absent, `{}` and `[]` are accepted).
public struct NoParams: ControlParams, Hashable {
    public init() {}

    public enum CodingKeys: CodingKey, CaseIterable {
        public static var allCases: [CodingKeys] { [] }
        public var stringValue: String { "" }
        public var intValue: Int? { nil }
        public init?(stringValue: String) { nil }
        public init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws { _ = encoder.container(keyedBy: CodingKeys.self) }
}

/// A notification the daemon sends on a connection: its name and its params.
public protocol ControlNotification: Sendable {
    associatedtype Params: Codable & Sendable
    static var name: String { get }
}

/// A part of a method's result that a client may decode alone (the rest of the result is skipped), for a client
/// that needs only a few members and runs often — a status-bar badge.
public protocol ControlResultView: Decodable, Sendable {
    associatedtype Method: ControlMethod
}
