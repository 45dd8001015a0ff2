internal import NIOCore
internal import Synchronization

/// What one connection is doing, as far as choosing a connection to close at a limit needs to know
/// (`ConnectionTable`): request lines received and not yet begun — counted on the event loop as each line is decoded,
/// so a connection that has asked is not idle even while its task has not got to the request — and whether a request
/// is being served, set by the connection's task. Atomics: neither side waits for the other, and a verdict taken on
/// the event loop sees both.
final class ConnectionActivity: Sendable {
    private let waiting = Atomic(0)
    private let serving = Atomic(false)
    /// When the write under way began (nanoseconds of the monotonic clock), 0 when none is.
    private let writingSince = Atomic<Int64>(0)

    /// A write that has waited this long for its client to read: the client is not reading. Long beside a reply's
    /// round trip, and beside a 256 KiB `backup` chunk read by a slow consumer (a USB stick, a pipe) — a connection
    /// doing slow but real work should not be taken for a deaf one.
    static let stalledAfter = Duration.seconds(10)

    /// No request received and waiting, none being served. The count is read first: a task taking the request
    /// marks itself serving before it takes the count down, so a count seen down comes with `serving` seen set.
    var isIdle: Bool { waiting.load(ordering: .acquiring) == 0 && !serving.load(ordering: .acquiring) }

    /// A reply (or a streamed notification) has waited `stalledAfter` or more to be written: its client sends and
    /// does not read. Such a connection serves nobody — it holds its place by being forever "serving" — and may be
    /// closed to make room like an idle one.
    func isStalled(at now: ContinuousClock.Instant = .now) -> Bool {
        let since = writingSince.load(ordering: .acquiring)
        return since != 0 && Self.nanoseconds(now) - since >= Self.nanoseconds(Self.stalledAfter)
    }

    /// Runs a write of the connection's, marked as under way while it waits for the client to read. With writes
    /// under way together (a reply beside a subscription's notification), the earliest keeps the mark until it ends.
    func writing<T>(_ write: () async throws -> T) async rethrows -> T {
        let marked = writingSince.compareExchange(
            expected: 0, desired: Self.nanoseconds(.now), ordering: .acquiringAndReleasing
        ).exchanged
        defer { if marked { writingSince.store(0, ordering: .releasing) } }
        return try await write()
    }

    /// For tests: a write under way since `instant`.
    func beganWriting(at instant: ContinuousClock.Instant) {
        writingSince.store(Self.nanoseconds(instant), ordering: .releasing)
    }

    private static let origin = ContinuousClock.now

    /// Nanoseconds since the process's first use of this type (never 0 for a later instant: 0 means "not writing").
    private static func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        nanoseconds(origin.duration(to: instant)) + 1
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// The connection's task takes a received request: serving before it stops waiting, so the connection is never
    /// idle while a request is in hand.
    func beginServing() {
        serving.store(true, ordering: .releasing)
        waiting.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// The request was answered.
    func endServing() { serving.store(false, ordering: .releasing) }

    /// An empty line: nothing to serve.
    func skip() { waiting.subtract(1, ordering: .acquiringAndReleasing) }

    /// The connection answers a last error and reads what is left until its end: never idle again (closed then,
    /// its client would have a reset instead of the error).
    func finishing() { serving.store(true, ordering: .releasing) }

    /// Counts each line the line decoder passes on (it sits right after the decoder).
    final class Counter: ChannelInboundHandler {
        typealias InboundIn = ControlFrame
        typealias InboundOut = ControlFrame

        private let activity: ConnectionActivity

        init(_ activity: ConnectionActivity) { self.activity = activity }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .line = unwrapInboundIn(data) { activity.waiting.add(1, ordering: .acquiringAndReleasing) }
            context.fireChannelRead(data)
        }
    }
}

/// An accepted connection, and what it is doing.
struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>
    let activity: ConnectionActivity
}
