internal import CNetlink
internal import Foundation
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// Link, address and route changes from the kernel (an `AF_NETLINK`/`NETLINK_ROUTE` socket bound to the link,
/// IPv4/IPv6 address and route groups). Each datagram becomes one element of `changes`; the probe debounces them.
/// A dedicated thread blocks in `recv` (woken every 250 ms to notice `stop()`), so nothing polls.
final class NetlinkMonitor: Sendable {
    let changes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let descriptor: Int32
    private let stopped = Mutex(false)

    /// Opens and binds the socket; throws when netlink is unavailable (the probe then polls).
    init() throws {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        guard fd >= 0 else { throw NetlinkUnavailable(reason: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = repairsyncd_netlink_groups()
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw NetlinkUnavailable(reason: "bind: \(reason)")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 250_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        descriptor = fd
        (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let thread = Thread { [self] in receive() }
        thread.name = "netlink"
        thread.start()
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while !stopped.withLock({ $0 }) {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { continuation.yield() }
        }
        continuation.finish()
        close(descriptor)
    }

    func stop() { stopped.withLock { $0 = true } }
}

struct NetlinkUnavailable: Error, CustomStringConvertible {
    let reason: String
    var description: String { "netlink unavailable (\(reason))" }
}
