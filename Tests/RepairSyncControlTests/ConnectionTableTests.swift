import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import RepairSyncControlServer

/// Which connection makes room at a limit (`ConnectionTable`): never one whose request has arrived and waits for its
/// task — under a flood of new connections the task may not have got to it yet — nor one whose request the event
/// loop reads between the choice and the close.
@Suite("Connection table")
struct ConnectionTableTests {
    let limits = ControlServer.Limits(maxConnections: 100, maxConnectionsPerUID: 1)
    static let request = #"{"jsonrpc":"2.0","method":"status","id":1}"#

    /// A connection as the server's pipeline sees it: the counter right after the line decoder, on an embedded loop
    /// whose time the test moves.
    struct Connection {
        let activity = ConnectionActivity()
        let channel: EmbeddedChannel
        let closed = Flag()

        init() {
            channel = EmbeddedChannel(handler: ConnectionActivity.Counter(activity))
            let closed = closed
            channel.closeFuture.whenComplete { _ in closed.raise() }
        }

        /// The event loop decodes a request line.
        func receive() throws {
            try channel.writeInbound(ControlFrame.line(ByteBuffer(string: ConnectionTableTests.request)))
            guard case .line(let passed)? = try channel.readInbound(as: ControlFrame.self) else {
                Issue.record("the counter did not pass the line on")
                return
            }
            #expect(passed.readableBytes > 0)
        }

        /// Admitted for uid 1000.
        func admit(to table: ConnectionTable) -> Int? { table.admit(1000, activity: activity, channel: channel) }

        /// The loop's next wait for I/O has passed.
        func pollOnce() { channel.embeddedEventLoop.advanceTime(by: ConnectionTable.verdictDelay) }
    }

    @Test(
        "a connection whose request arrived and is not served yet is not closed to make room; once answered and idle, it is"
    )
    func waitingRequestIsNotIdle() throws {
        let table = ConnectionTable(limits: limits)
        let first = Connection()
        let id = try #require(first.admit(to: table))
        try first.receive()
        #expect(!first.activity.isIdle)

        // At the per-uid limit, with the only connection holding a waiting request: nothing is idle, refused.
        let other = Connection()
        #expect(other.admit(to: table) == nil)
        first.pollOnce()
        #expect(!first.closed.isRaised, "the connection with a waiting request was closed to make room")

        // Served and answered: idle again, so the next newcomer takes its place.
        first.activity.beginServing()
        #expect(!first.activity.isIdle, "idle while its request is served")
        table.touch(id)
        first.activity.endServing()
        #expect(first.activity.isIdle)
        #expect(other.admit(to: table) != nil)
        #expect(!first.closed.isRaised, "closed before its loop could read what the kernel held for it")
        first.pollOnce()
        #expect(first.closed.isRaised, "the idle connection made room")
        #expect(table.count == 1)
    }

    @Test(
        "a connection whose client does not read what it asked for (a reply waiting 10 s to be written) makes room like an idle one; a reply being written does not"
    )
    func stalledWriterMakesRoom() throws {
        let table = ConnectionTable(limits: limits)
        let deaf = Connection()
        _ = try #require(deaf.admit(to: table))
        try deaf.receive()
        deaf.activity.beginServing()
        deaf.activity.beganWriting(at: .now)
        let other = Connection()
        #expect(other.admit(to: table) == nil, "a reply just being written is no stall")
        deaf.activity.beganWriting(at: ContinuousClock.now.advanced(by: .zero - ConnectionActivity.stalledAfter))
        #expect(deaf.activity.isStalled() && !deaf.activity.isIdle)
        let admitted = try #require(other.admit(to: table))
        deaf.pollOnce()
        #expect(deaf.closed.isRaised, "the deaf connection made room")
        #expect(table.count == 1)
        table.release(admitted)
    }

    @Test(
        "a connection chosen to make room whose request the loop reads before it is closed stays open, and another idle one goes in its place"
    )
    func requestReadBeforeTheVerdictKeepsTheConnection() throws {
        let table = ConnectionTable(limits: limits)
        let prober = Connection()
        _ = try #require(prober.admit(to: table))

        // A newcomer at the limit: the prober looks idle (its request is still in the kernel) and is chosen.
        let flood = Connection()
        _ = try #require(flood.admit(to: table))
        #expect(table.count == 1, "the one chosen no longer counts")
        #expect(!prober.closed.isRaised, "closed before the loop could read what the kernel held for it")

        // The loop reads the request, then the verdict: kept, counted again, and the idle newcomer goes instead.
        try prober.receive()
        prober.pollOnce()
        #expect(!prober.closed.isRaised, "closed with its request unread: its client gets a reset and no answer")
        #expect(table.count == 1, "over the limit while an idle connection could make room")
        flood.pollOnce()
        #expect(flood.closed.isRaised, "the idle connection chosen in the kept one's place stayed open")
        #expect(!prober.closed.isRaised)
    }

    @Test(
        "kept with nothing idle to go instead, the table is over its limit by that one until the next newcomer, whose admission brings it back"
    )
    func overTheLimitOnlyUntilTheNextAdmission() throws {
        let table = ConnectionTable(limits: limits)
        let first = Connection()
        let firstId = try #require(first.admit(to: table))
        let second = Connection()
        let secondId = try #require(second.admit(to: table))
        try first.receive()
        try second.receive()
        first.pollOnce()
        #expect(table.count == 2, "the kept connection was not counted")

        // Both answered and idle: the next newcomer makes both go, and the table is within its limit again.
        for (connection, id) in [(first, firstId), (second, secondId)] {
            connection.activity.beginServing()
            table.touch(id)
            connection.activity.endServing()
        }
        let third = Connection()
        _ = try #require(third.admit(to: table))
        first.pollOnce()
        second.pollOnce()
        #expect(first.closed.isRaised && second.closed.isRaised)
        #expect(table.count == 1)
    }

    @Test("a connection chosen to make room that subscribes before the verdict stays, though its activity is idle")
    func subscribedBeforeTheVerdict() throws {
        let table = ConnectionTable(limits: ControlServer.Limits(maxConnections: 100, maxConnectionsPerUID: 2))
        let first = Connection()
        let id = try #require(first.admit(to: table))
        let others = (0..<2).map { _ in Connection() }
        for other in others { _ = try #require(other.admit(to: table)) }
        table.setSubscribed(id)
        first.pollOnce()
        #expect(!first.closed.isRaised, "a subscription was closed to make room")
        others[0].pollOnce()
        #expect(others[0].closed.isRaised, "the idle connection chosen in the subscribed one's place stayed open")
        #expect(table.count == 2)
    }

    @Test("a connection answering a line too long, then reading to its end, is never idle again")
    func finishingIsNotIdle() {
        let activity = ConnectionActivity()
        #expect(activity.isIdle)
        activity.finishing()
        #expect(!activity.isIdle)
    }

    @Test("a connection that ends while chosen to make room is not counted again")
    func releasedWhileChosen() throws {
        let table = ConnectionTable(limits: limits)
        let first = Connection()
        let id = try #require(first.admit(to: table))
        let second = Connection()
        _ = try #require(second.admit(to: table))
        try first.receive()
        table.release(id)  // its peer closed it meanwhile
        first.pollOnce()
        #expect(table.count == 1)
    }

    final class Flag: Sendable {
        private let state = Mutex(false)
        func raise() { state.withLock { $0 = true } }
        var isRaised: Bool { state.withLock { $0 } }
    }
}
