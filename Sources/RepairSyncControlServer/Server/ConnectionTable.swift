internal import NIOCore
internal import Synchronization

/// Open connections, in total and per uid, and which of them are idle.
///
/// When a limit is reached, a new connection does not simply bounce: the connection idle the longest — no request
/// in progress, none received and waiting to be served, not subscribed, no complete request for the longest time
/// (half-written lines count as idle) — is closed to make room, within the same uid when the per-uid limit is the
/// one reached. A connection whose client does not read what it asked for (a reply waiting 10 s or more to be
/// written) counts as idle: it serves nobody. Only when nothing is idle is the new connection refused. So idle, slow
/// or deaf connections, even a thousand of them from the same user, can never lock anyone out of `status`; busy ones
/// and subscriptions are bounded by the limits as before.
///
/// The one chosen is not closed at once but on its event loop a moment later (`verdictDelay`): a request the kernel
/// already holds for it — sent just after it connected, while a flood of newer connections was admitted ahead of the
/// loop's read — is then most likely read and counted, and the connection stays, counted again, and is served;
/// closed with that request unread, its client would have had a reset and no answer. Best effort: a loop kept busy
/// past the delay may decide before it reads. A connection kept this way makes another idle one go in its place; only
/// when none is idle does the table stay over a limit, by at most the connections chosen in that moment, and the
/// next newcomer's admission brings it back within.
final class ConnectionTable: Sendable {
    struct Entry {
        var uid: UInt32
        var lastActivity: ContinuousClock.Instant
        var subscribed = false
        var activity: ConnectionActivity
        var channel: any Channel

        /// May be closed to make room: idle and not subscribed — or stalled, its client not reading what it asked for
        /// (`ConnectionActivity.isStalled`), subscribed or not.
        var mayMakeRoom: Bool { (!subscribed && activity.isIdle) || activity.isStalled() }
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
        /// Chosen to make room, waiting for the verdict on their event loop; not counted.
        var closing: [Int: Entry] = [:]
    }

    let limits: ControlServer.Limits
    private let state = Mutex(State())

    /// How long the verdict on a connection chosen to make room waits. A task scheduled ahead on an event loop runs
    /// after the loop's next wait for I/O, whose ready sockets it reads first — unless the loop is kept busy with
    /// tasks past the delay; tasks submitted to run now may run before any wait. Long beside a loop's turn, short
    /// beside a client's patience.
    static let verdictDelay = TimeAmount.milliseconds(10)

    init(limits: ControlServer.Limits) { self.limits = limits }

    /// Admits a connection (its id), choosing the longest-idle ones to close while a limit is reached; nil when none
    /// is idle.
    func admit(_ uid: UInt32, activity: ConnectionActivity, channel: any Channel) -> Int? {
        var chosen: [(id: Int, entry: Entry)] = []
        let id: Int? = state.withLock { state in
            let fits: Bool
            (chosen, fits) = Self.makeRoom(&state, for: uid, adding: 1, limits: limits)
            guard fits else { return nil }
            state.next += 1
            state.entries[state.next] = Entry(uid: uid, lastActivity: .now, activity: activity, channel: channel)
            return state.next
        }
        for (id, entry) in chosen { close(id, entry) }
        return id
    }

    /// Moves idle connections, longest-idle first, to `closing` until `adding` more of `uid` fit; whether they do
    /// (not when too few are idle). The counts are taken once and follow the moves.
    private static func makeRoom(
        _ state: inout State, for uid: UInt32, adding: Int, limits: ControlServer.Limits
    ) -> (chosen: [(id: Int, entry: Entry)], fits: Bool) {
        var chosen: [(id: Int, entry: Entry)] = []
        var total = state.entries.count + adding
        var mine = state.entries.values.count { $0.uid == uid } + adding
        while total > limits.maxConnections || mine > limits.maxConnectionsPerUID {
            let perUIDFull = mine > limits.maxConnectionsPerUID
            let idle = state.entries.filter { $0.value.mayMakeRoom && (!perUIDFull || $0.value.uid == uid) }
            guard let victim = idle.min(by: { $0.value.lastActivity < $1.value.lastActivity }) else {
                return (chosen, false)
            }
            state.entries[victim.key] = nil
            state.closing[victim.key] = victim.value
            chosen.append((victim.key, victim.value))
            total -= 1
            if victim.value.uid == uid { mine -= 1 }
        }
        return (chosen, true)
    }

    private func close(_ id: Int, _ entry: Entry) {
        entry.channel.eventLoop.scheduleTask(in: Self.verdictDelay) { [self] in
            var others: [(id: Int, entry: Entry)] = []
            let keep = state.withLock { state in
                // Gone meanwhile (its peer closed it): nothing to decide.
                guard var kept = state.closing.removeValue(forKey: id) else { return false }
                guard !kept.mayMakeRoom else { return false }
                kept.lastActivity = .now
                state.entries[id] = kept
                others = Self.makeRoom(&state, for: kept.uid, adding: 0, limits: limits).chosen
                return true
            }
            if !keep { entry.channel.close(promise: nil) }
            for (id, entry) in others { close(id, entry) }
        }
    }

    /// A request was answered.
    func touch(_ id: Int) {
        state.withLock { state in
            state.entries[id]?.lastActivity = .now
            state.closing[id]?.lastActivity = .now
        }
    }

    func setSubscribed(_ id: Int) {
        state.withLock { state in
            state.entries[id]?.subscribed = true
            state.closing[id]?.subscribed = true
        }
    }

    /// The connection ended (a no-op for one closed to make room, already gone).
    func release(_ id: Int) {
        state.withLock { state in
            state.entries[id] = nil
            state.closing[id] = nil
        }
    }

    /// Connections counted against the limits.
    var count: Int { state.withLock { $0.entries.count } }
}
