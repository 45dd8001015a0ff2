import Foundation
import RepairSyncControlClient
import RepairSyncProtocol
import RepairSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon refuses a connection over its limits with an error whose id is null (it read no request to take one
/// from) and closes: the client must report that error, not the reset that follows it.
@Suite("Control client: a refusal with no id", .timeLimit(.minutes(1)))
struct ControlClientRefusalTests {
    @Test(
        "an error reply with id null is the call's answer: the daemon's own words, not 'could not be read' — whether it closed before the request was sent or after it came",
        arguments: [false, true])
    func refusalWithNullId(afterRequest: Bool) throws {
        let directory = try TemporaryDirectory(prefix: "control-refusal")
        let path = directory.path("control.sock")
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        #expect(UnixSocketAddress.with(path) { bind(listener, $0, $1) } == 0)
        #expect(listen(listener, 4) == 0)
        // As the daemon at its limit: accept, answer -32005 with id null, close — the request still unread, so the
        // client's next read is reset.
        // A thread of its own: the client's call below blocks its thread, and the test cases run side by side on a
        // cooperative pool of as many threads as cores.
        let served = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { served.signal() }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            if afterRequest {
                // The request is in the socket, still unread (peeked at, not taken).
                var byte: UInt8 = 0
                _ = recv(connection, &byte, 1, Int32(MSG_PEEK))
            }
            let refusal = Array(
                (#"{"jsonrpc":"2.0","error":{"code":-32005,"message":"too many control connections, none idle"},"id":null}"#
                    + "\n").utf8)
            _ = refusal.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
        let client = try ControlClient(path: path)
        client.setReplyTimeout(seconds: 10)
        do {
            _ = try client.call(RPC.Ping.self)
            Issue.record("the refused call returned a result")
        } catch .rpc(let error) {
            #expect(error.code == -32005, "\(error)")
            #expect(error.message == "too many control connections, none idle")
        } catch {
            Issue.record("the refusal was lost: \(error)")
        }
        served.wait()
    }
}
