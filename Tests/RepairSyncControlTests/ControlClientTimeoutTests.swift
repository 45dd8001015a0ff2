import Foundation
import RepairSyncControlClient
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A client with a reply timeout gives up on a daemon that accepted the request and never answered, and says which
/// call it was waiting for (what the reliability harness relies on to name a stalled call).
@Suite("Control client: reply timeout", .timeLimit(.minutes(1)))
struct ControlClientTimeoutTests {
    @Test("a daemon that never answers: the call fails after the timeout, naming the method")
    func silentDaemon() throws {
        let directory = try TemporaryDirectory(prefix: "control-silent")
        let path = directory.path("control.sock")
        // Listens, never accepts, never answers: the kernel completes the connection and takes the request.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        #expect(UnixSocketAddress.with(path) { bind(listener, $0, $1) } == 0)
        #expect(listen(listener, 4) == 0)

        let client = try ControlClient(path: path)
        client.setReplyTimeout(seconds: 1)
        let started = ContinuousClock.now
        do {
            _ = try client.call("status")
            Issue.record("a reply came from a socket nobody answers on")
        } catch {
            #expect("\(error)" == "the daemon's reply could not be read: no reply to `status` within 1 s", "\(error)")
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(900), "it gave up before its timeout: \(waited)")
    }
}
