internal import Foundation

#if canImport(Glibc)
    internal import Glibc
#endif

/// The file a listening Unix socket is bound to, as the file system has it now: for a socket systemd passed, where
/// it is and what the unit's `SocketGroup=` and `SocketMode=` made of it.
struct SocketFile: Sendable, Equatable {
    var path: String
    var group: gid_t
    var mode: UInt32

    /// Nil for an abstract or unnamed socket, or when the file is gone or is no longer a socket.
    init?(descriptor: Int32) {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: &address.sun_path) { bytes -> String? in
            // An abstract socket's name starts with a zero byte; a file's path ends with one.
            guard let end = bytes.firstIndex(of: 0), end > 0 else { return nil }
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
        guard let path, let file = try? FileManager.default.attributesOfItem(atPath: path),
            file[.type] as? FileAttributeType == .typeSocket,
            let group = file[.groupOwnerAccountID] as? NSNumber, let mode = file[.posixPermissions] as? NSNumber
        else { return nil }
        self.path = path
        self.group = gid_t(truncatingIfNeeded: group.intValue)
        self.mode = UInt32(truncatingIfNeeded: mode.intValue) & 0o7777
    }
}
