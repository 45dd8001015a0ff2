internal import NIOCore
internal import Synchronization

/// Open connections, in total and per uid, and which of them are idle.
///
/// When a limit is reached, a new connection does not simply bounce: the connection idle the longest — no request
/// in progress, none received and waiting to be served, not subscribed, no complete request for the longest time
/// (half-written lines count as idle) — is closed to make room, within the same uid when the per-uid limit is the
/// one reached. Only when nothing is idle is the new connection refused. So idle or slow connections, even a
/// thousand of them from the same user, can never lock anyone out of `status`; busy ones and subscriptions are
/// bounded by the limits as before.
///
/// The one chosen is closed on its event loop after the loop's next wait for I/O, not at once: a request the kernel
/// already holds for it — sent just after it connected, while a flood of newer connections was admitted ahead of the
/// loop's read — is read and counted first, and then it stays (counted again) and is served. Closed with that request
/// unread, its client would have had a reset and no answer. Connections being closed do not count against the limits;
/// the table can exceed a limit by the ones kept this way, until the next newcomers make room again.
final class ConnectionTable: Sendable {
    struct Entry {
        var uid: UInt32
        var lastActivity: ContinuousClock.Instant
        var subscribed = false
        var activity: ConnectionActivity
        var channel: any Channel
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
        /// Chosen to make room, waiting for the verdict on their event loop.
        var closing: [Int: Entry] = [:]
    }

    private let state = Mutex(State())

    /// How long the verdict on a connection chosen to make room waits. A task scheduled ahead on an event loop runs
    /// after the loop's next wait for I/O, whose ready sockets it reads first — unless the loop is still busy with
    /// the sockets of its last wait when the delay is over; tasks submitted to run now may run before any wait. The
    /// delay is long beside a loop's turn and short beside a client's patience.
    static let verdictDelay = TimeAmount.milliseconds(10)

    /// Admits a connection (its id), choosing the longest-idle one to close if a limit is reached; nil when none is
    /// idle.
    func admit(
        _ uid: UInt32, limits: ControlServer.Limits, activity: ConnectionActivity, channel: any Channel
    ) -> Int? {
        var chosen: (id: Int, entry: Entry)?
        let id: Int? = state.withLock { state in
            let mine = state.entries.values.count { $0.uid == uid }
            let perUIDFull = mine >= limits.maxConnectionsPerUID
            if perUIDFull || state.entries.count >= limits.maxConnections {
                let idle = state.entries.filter { entry in
                    !entry.value.subscribed && entry.value.activity.isIdle && (!perUIDFull || entry.value.uid == uid)
                }
                guard let victim = idle.min(by: { $0.value.lastActivity < $1.value.lastActivity }) else { return nil }
                state.entries[victim.key] = nil
                state.closing[victim.key] = victim.value
                chosen = (victim.key, victim.value)
            }
            state.next += 1
            state.entries[state.next] = Entry(uid: uid, lastActivity: .now, activity: activity, channel: channel)
            return state.next
        }
        if let chosen { close(chosen.id, chosen.entry) }
        return id
    }

    private func close(_ id: Int, _ entry: Entry) {
        entry.channel.eventLoop.scheduleTask(in: Self.verdictDelay) { [self] in
            let keep = state.withLock { state in
                // Gone meanwhile (its peer closed it): nothing to decide.
                guard var kept = state.closing.removeValue(forKey: id) else { return false }
                guard kept.subscribed || !kept.activity.isIdle else { return false }
                kept.lastActivity = .now
                state.entries[id] = kept
                return true
            }
            if !keep { entry.channel.close(promise: nil) }
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
