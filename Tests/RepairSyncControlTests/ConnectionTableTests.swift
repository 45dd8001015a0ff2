import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import RepairSyncControlServer

/// Which connection makes room at a limit (`ConnectionTable`): never one whose request has arrived and waits for its
/// task — under a flood of new connections the task may not have got to it yet.
@Suite("Connection table")
struct ConnectionTableTests {
    let limits = ControlServer.Limits(maxConnections: 100, maxConnectionsPerUID: 1)

    @Test(
        "a connection whose request arrived and is not served yet is not closed to make room; once answered and idle, it is"
    )
    func waitingRequestIsNotIdle() throws {
        let table = ConnectionTable()
        let waiting = WaitingRequests()
        let closed = Flag()
        let admitted = table.admit(1000, limits: limits, waiting: waiting, close: { closed.raise() })
        let first = try #require(admitted)

        // The request line goes through the pipeline's counter, as the event loop decodes it.
        let channel = EmbeddedChannel(handler: WaitingRequests.Counter(waiting))
        try channel.writeInbound(ControlFrame.line(ByteBuffer(string: #"{"jsonrpc":"2.0","method":"status","id":1}"#)))
        guard case .line(let passed)? = try channel.readInbound(as: ControlFrame.self) else {
            Issue.record("the counter did not pass the line on")
            return
        }
        #expect(passed.readableBytes > 0)
        #expect(waiting.any)

        // At the per-uid limit, with the only connection holding a waiting request: nothing is idle, refused.
        let refused = table.admit(1000, limits: limits, waiting: WaitingRequests(), close: {})
        #expect(refused == nil)
        #expect(!closed.isRaised, "the connection with a waiting request was closed to make room")

        // Served and answered: idle again, so the next newcomer takes its place.
        table.setBusy(first, true)
        waiting.taken()
        table.setBusy(first, false)
        #expect(!waiting.any)
        let newcomer = table.admit(1000, limits: limits, waiting: WaitingRequests(), close: {})
        #expect(newcomer != nil)
        #expect(closed.isRaised, "the idle connection made room")
        _ = try channel.finish()
    }

    final class Flag: Sendable {
        private let state = Mutex(false)
        func raise() { state.withLock { $0 = true } }
        var isRaised: Bool { state.withLock { $0 } }
    }
}
