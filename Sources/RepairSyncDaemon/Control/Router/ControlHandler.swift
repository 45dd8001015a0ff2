internal import RepairSyncControlServer
internal import RepairSyncProtocol

/// The daemon's side of one method of the catalogue: typed params in, typed result out. The router has already
/// decoded and validated the params, checked the caller's access and logged a change; errors thrown here are
/// mapped to the documented codes by the router, once.
protocol ControlHandler: Sendable {
    associatedtype Method: ControlMethod

    init(services: ControlServices)

    func handle(_ params: Method.Params, _ request: ControlRequest) async throws -> Method.Result
}

extension ControlHandler {
    static var methodName: String { Method.name }
}

/// One call as a handler sees it: who is calling, and the connection (for subscriptions, streamed notifications,
/// actions after the reply).
struct ControlRequest: Sendable {
    let context: ControlRequestContext

    var peer: ControlPeer { context.peer }

    /// Sends `N` notifications with each element of `updates`, until the stream ends or the connection closes.
    func subscribe<N: ControlNotification, S: AsyncSequence & Sendable>(_ notification: N.Type, to updates: S)
        throws(JSONRPCError) where S.Element == N.Params, S.Failure == Never
    {
        let encoder = JSONValueEncoder()
        try context.subscribe(method: N.name, to: updates.map { (try? encoder.encode($0)) ?? .null })
    }

    /// Sends one `N` notification before the reply, waiting until it is written.
    func stream<N: ControlNotification>(_ notification: N.Type, _ params: N.Params) async throws {
        try await context.stream(method: N.name, params: try JSONValueEncoder().encode(params))
    }

    /// Runs `action` once the reply has been written.
    func afterReply(_ action: @escaping @Sendable () async -> Void) { context.afterReply(action) }
}
