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

        /// The loop's next wait for I/O has passed.
        func pollOnce() { channel.embeddedEventLoop.advanceTime(by: ConnectionTable.verdictDelay) }
    }

    @Test(
        "a connection whose request arrived and is not served yet is not closed to make room; once answered and idle, it is"
    )
    func waitingRequestIsNotIdle() throws {
        let table = ConnectionTable()
        let first = Connection()
        let id = try #require(table.admit(1000, limits: limits, activity: first.activity, channel: first.channel))
        try first.receive()
        #expect(!first.activity.isIdle)

        // At the per-uid limit, with the only connection holding a waiting request: nothing is idle, refused.
        let other = Connection()
        #expect(table.admit(1000, limits: limits, activity: other.activity, channel: other.channel) == nil)
        first.pollOnce()
        #expect(!first.closed.isRaised, "the connection with a waiting request was closed to make room")

        // Served and answered: idle again, so the next newcomer takes its place.
        first.activity.beginServing()
        #expect(!first.activity.isIdle, "idle while its request is served")
        table.touch(id)
        first.activity.endServing()
        #expect(first.activity.isIdle)
        #expect(table.admit(1000, limits: limits, activity: other.activity, channel: other.channel) != nil)
        first.pollOnce()
        #expect(first.closed.isRaised, "the idle connection made room")
        #expect(table.count == 1)
    }

    @Test(
        "a connection chosen to make room whose request the loop reads before it is closed stays open and is counted again; one with nothing stays chosen"
    )
    func requestReadBeforeTheVerdictKeepsTheConnection() throws {
        let table = ConnectionTable()
        let prober = Connection()
        let idle = Connection()
        _ = try #require(table.admit(1000, limits: limits, activity: prober.activity, channel: prober.channel))

        // A newcomer at the limit: the prober looks idle (its request is still in the kernel) and is chosen.
        let flood = Connection()
        _ = try #require(table.admit(1000, limits: limits, activity: flood.activity, channel: flood.channel))
        #expect(table.count == 1, "the one chosen no longer counts")
        #expect(!prober.closed.isRaised, "closed before the loop could read what the kernel held for it")

        // The loop reads the request, then the verdict: kept, and counted again.
        try prober.receive()
        prober.pollOnce()
        #expect(!prober.closed.isRaised, "closed with its request unread: its client gets a reset and no answer")
        #expect(table.count == 2)

        // The flood goes on: the connection with nothing to read is the one that goes.
        _ = try #require(table.admit(1000, limits: limits, activity: idle.activity, channel: idle.channel))
        flood.pollOnce()
        #expect(flood.closed.isRaised, "an idle connection chosen to make room stayed open")
        #expect(!prober.closed.isRaised)
        #expect(table.count == 2)
    }

    @Test("a connection that ends while chosen to make room is not counted again")
    func releasedWhileChosen() throws {
        let table = ConnectionTable()
        let first = Connection()
        let id = try #require(table.admit(1000, limits: limits, activity: first.activity, channel: first.channel))
        let second = Connection()
        _ = try #require(table.admit(1000, limits: limits, activity: second.activity, channel: second.channel))
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
