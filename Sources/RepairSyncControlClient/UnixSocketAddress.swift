#if canImport(Glibc)
    public import Glibc
#endif

/// A filesystem Unix-socket address for the C socket calls (`bind`, `connect`).
///
/// ```swift
/// let result = UnixSocketAddress.with(path) { address, length in connect(fd, address, length) }
/// ```
public enum UnixSocketAddress {
    /// Calls `body` with a `sockaddr_un` for `path`; nil when the path does not fit in one (108 bytes on Linux).
    public static func with<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
