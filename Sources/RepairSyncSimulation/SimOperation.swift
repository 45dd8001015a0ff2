internal import RepairSyncModels

/// One step of a simulation. A seed draws a list of them; a failing list is shrunk by removing steps, so every
/// operation is stated relative to the state it meets (a record by index among those that exist, a delivery to
/// whatever request waits) and is skipped when it does not apply.
public enum SimOperation: Sendable, Hashable, CustomStringConvertible {
    // Local work, through the engine's own methods.
    case localUpdate(devices: Bool, record: Int, field: Int, value: Int)
    /// A local edit of the record whose write the network carried last (the person at the counter goes on with the
    /// record they just changed — while that write may still be in doubt).
    case localUpdateLastWritten(field: Int, value: Int)
    /// A local edit of a field that a PATCH waiting on the network carries (by index among its fields): an edit made
    /// while the push of the same field is in flight, which must neither coalesce into it nor be lost when it ends.
    case localUpdateInFlight(field: Int, value: Int)
    case localMessage(ticket: Int, content: Int, sameIdAsLast: Bool)
    /// Booking in through the engine: `kind` 0 a client, 1 an order (with `devices` devices) for a client in the
    /// replica, 2 a device on an order in the replica, 3 a new client with an order and its devices.
    case localCreate(kind: Int, parent: Int, devices: Int)
    /// Another program inserts a client, an order or a device row itself (`kind` 0, 1, 2; the parent by index among
    /// the replica's); its `queueChange` comes with a later `queueInserted` (or never).
    case toolInsert(kind: Int, parent: Int)
    case queueInserted(index: Int)
    /// Another program writes a row of the replica; `queueChange` comes with a later `queueExternal` (or never).
    case externalWrite(devices: Bool, record: Int, field: Int, value: Int)
    case queueExternal(devices: Bool, record: Int)
    case retryDead(index: Int)
    case discardDead(index: Int)
    case decideConflict(index: Int, keepLocal: Bool)

    // Other users and systems on the server.
    case serverEdit(collection: Int, record: Int, field: Int, value: Int)
    case serverDelete(collection: Int, record: Int)
    case serverRecreate(collection: Int, record: Int)
    case serverRewind(collection: Int, record: Int, inFeed: Bool)
    case serverCreateMessage(ticket: Int)
    case expireCursors
    /// The server is restored from one of its recent backups (everything goes back, cursors expire).
    case serverRestore(backup: Int)

    // Runs, and what happens to the request that waits.
    case startSync(SyncKind)
    case deliver(Delivery)
    /// The engine dies mid-operation and is opened again on the same file. `afterApply`: the server had applied the
    /// request in flight (if any) when the process died.
    case crash(afterApply: Bool)
    /// A real process death: the engine runs a sync in a child process (`repairsync-test-helper`) against this
    /// server over loopback and SIGKILLs itself at the `count`th event of a kind (sending, accepted, pushed, a page
    /// received, a page applied) — wherever SQLite is at that instant; then the file is opened here again.
    case processCrash(event: Int, count: Int)
    case advance(milliseconds: Int64)
    /// The workstation's wall clock is set (the monotonic clock does not move).
    case jumpWall(milliseconds: Int64)

    public enum SyncKind: Sendable, Hashable {
        case full
        case pushOnly
        /// A subset of the collections, as a bit mask over `SyncCollection.pullOrder`.
        case partial(mask: Int)
        /// The same collections pulled again from the beginning (`resync`: their records marked, then swept).
        case resync(mask: Int)
    }

    public enum Delivery: Sendable, Hashable {
        case normal
        /// No connection: nothing was sent.
        case unreachable
        /// Lost on the way: the server never saw it, but the client cannot tell.
        case lostRequest
        /// The server applied it; the response was lost (or came after the client's timeout).
        case lostResponse
        case serverError(Int)
        case rateLimited(seconds: Int, asDate: Bool)
        case unavailableRetryAfter(seconds: Int)
        case unauthorized
        /// A proxy's or portal's HTML page with this status.
        case proxyPage(Int)
        /// The server applied it and answered 2xx with half the body.
        case truncated
        /// A write the server refuses for good: `422 invalid_value`, not applied (remembered for its key).
        case refused
        /// A PATCH answered `200` at a new version without its values: acknowledged and not applied (remembered for
        /// its key, so a replay answers the same). Other requests: a normal delivery.
        case notApplied
        // Feed faults (a normal delivery for other requests).
        case stuckFeed
        case emptyFeed
        /// The page asked for, `has_more`, and a cursor naming the same position under a new text (a nonce).
        case rotatingFeed
        case stalePage(back: Int)
        /// The page for the cursor asked for, with the right next cursor, but records in it as older copies (a lagging
        /// cache or read replica): each an earlier version than the one the replica holds, which the client must
        /// keep — the feed will not bring the newer one again.
        case staleCopies
        case malformedRecord
        case cursorExpired
    }

    public var description: String {
        switch self {
        case .localUpdate(let devices, let record, let field, let value):
            "local update \(devices ? "device" : "order") #\(record) field \(field) = v\(value)"
        case .localUpdateLastWritten(let field, let value):
            "local update of the record written last, field \(field) = v\(value)"
        case .localUpdateInFlight(let field, let value): "local update of a field in flight, #\(field) = v\(value)"
        case .localMessage(let ticket, let content, let same):
            "local message on ticket #\(ticket) content \(content)\(same ? " (same id as the last)" : "")"
        case .localCreate(let kind, let parent, let devices):
            "book in \(["a client", "an order", "a device", "a client with an order"][kind % 4]) (parent #\(parent), \(devices % 3) devices)"
        case .toolInsert(let kind, let parent):
            "another program inserts \(["a client", "an order", "a device"][kind % 3]) (parent #\(parent))"
        case .queueInserted(let index): "queueChange for inserted row #\(index)"
        case .externalWrite(let devices, let record, let field, let value):
            "another program writes \(devices ? "device" : "order") #\(record) field \(field) = v\(value)"
        case .queueExternal(let devices, let record): "queueChange \(devices ? "device" : "order") #\(record)"
        case .retryDead(let index): "retry dead change #\(index)"
        case .discardDead(let index): "discard dead change #\(index)"
        case .decideConflict(let index, let keepLocal):
            "decide open conflict #\(index): keep \(keepLocal ? "local" : "remote")"
        case .serverEdit(let collection, let record, let field, let value):
            "server edit \(Self.collectionName(collection)) #\(record) field \(field) = v\(value)"
        case .serverDelete(let collection, let record):
            "server delete \(Self.collectionName(collection, amongAll: true)) #\(record)"
        case .serverRecreate(let collection, let record):
            "server delete and create again \(Self.collectionName(collection)) #\(record)"
        case .serverRewind(let collection, let record, let inFeed):
            "server history goes back for \(Self.collectionName(collection)) #\(record)\(inFeed ? " (in the feed)" : "")"
        case .serverCreateMessage(let ticket): "server: a message on ticket #\(ticket)"
        case .expireCursors: "server expires every cursor"
        case .serverRestore(let backup): "server restored from backup #\(backup)"
        case .startSync(let kind): "start sync \(kind)"
        case .deliver(let delivery): "deliver: \(delivery)"
        case .crash(let afterApply): "crash\(afterApply ? " after the server applied the request in flight" : "")"
        case .processCrash(let event, let count):
            "a child process syncs and is killed at \(Self.killEvents[event % Self.killEvents.count]):\(count)"
        case .advance(let ms): "advance the clock \(ms) ms"
        case .jumpWall(let ms): "set the wall clock by \(ms) ms"
        }
    }

    /// The operation as Swift source (for a regression test that keeps a shrunk list).
    public var swiftLiteral: String {
        if case .expireCursors = self { return ".expireCursors" }
        return Self.literal(self)
    }

    private static func literal(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .enum?:
            guard let payload = mirror.children.first, let name = payload.label else { return ".\(value)" }
            if Mirror(reflecting: payload.value).displayStyle == .enum { return ".\(name)(\(literal(payload.value)))" }
            let fields = Mirror(reflecting: payload.value).children
            if fields.isEmpty { return ".\(name)(\(literal(payload.value)))" }
            let arguments = fields.map { field in
                (field.label.map { $0.hasPrefix(".") ? "" : "\($0): " } ?? "") + literal(field.value)
            }
            return ".\(name)(\(arguments.joined(separator: ", ")))"
        default:
            return "\(value)"
        }
    }

    static let killEvents = ["sending", "accepted", "pushed", "page-received", "page-applied"]

    /// The collection an index names, as the simulator picks it: among the first four of the pull order (those
    /// whose records other users edit), or among all five for a deletion.
    static func collectionName(_ index: Int, amongAll: Bool = false) -> String {
        let names = SyncCollection.pullOrder.map(\.name)
        return names[index % (amongAll ? names.count : 4)]
    }
}
