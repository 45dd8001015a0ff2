internal import Foundation
internal import RepairSyncControlClient
internal import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// A plain blocking Unix-socket connection for hostile and idle clients: raw bytes out, lines in, nothing checked.
final class RawConnection: @unchecked Sendable {
    let descriptor: Int32
    private var received: [UInt8] = []

    init(path: String, receiveTimeout seconds: Int = 30) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        let fd = descriptor
        guard UnixSocketAddress.with(path, { connect(fd, $0, $1) }) == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// Writes all of `bytes` (false when the peer closed).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// The next line, or nil at the end (or after the receive timeout).
    func readLine() -> String? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                defer { received.removeSubrange(...newline) }
                return String(decoding: received[..<newline], as: UTF8.self)
            }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            received += chunk[..<count]
        }
    }

    enum State { case open, closedByPeer, hasData }

    /// Without blocking: whether the peer closed, sent something, or nothing happened.
    var state: State {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return .closedByPeer }
        if count > 0 { return .hasData }
        return errno == ECONNRESET ? .closedByPeer : .open
    }
}
