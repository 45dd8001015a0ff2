internal import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One process per store: an exclusive `flock` on `<store>.lock`, held for the life of the process (the kernel
/// releases it when the process ends, however it ends). A second daemon — or any engine, such as the test helper —
/// on the same store is refused before it touches the store, with the pid of the holder.
public final class StoreLock: Sendable {
    public let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock of the store at `storePath` (its directory must exist), or throws `StoreError.locked`.
    public static func acquire(forStoreAt storePath: String) throws -> StoreLock {
        let path = storePath + ".lock"
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw StoreError.cannotOpen(path: path, reason: String(cString: strerror(reason)))
            }
            let holder =
                count > 0
                ? Int32(
                    String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                : nil
            throw StoreError.locked(path: storePath, pid: holder)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return StoreLock(path: path, descriptor: descriptor)
    }

    deinit { close(descriptor) }
}
