public import Foundation
internal import RepairSyncControlClient
internal import RepairSyncProtocol

#if canImport(Glibc)
    internal import Glibc
#endif

/// A `NOTIFY_SOCKET` for a daemon under test or in the soak: receives its sd_notify datagrams (READY=1, STATUS=…, STOPPING=1) on
/// a dedicated thread, so a test waits for readiness the way systemd does instead of polling.
public final class NotifyListener: @unchecked Sendable {
    public let path: String
    private let descriptor: Int32
    private let lock = NSCondition()
    private var messages: [String] = []
    /// Every datagram ever received (`waitForLine` searches it; `wait(for:)` consumes `messages`).
    private var history: [String] = []
    private var closed = false

    public init(path: String) throws {
        self.path = path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor
        // A socket file left by an earlier listener on this path (a daemon started again in the same directory).
        unlink(path)
        let bound = UnixSocketAddress.with(path) { bind(descriptor, $0, $1) }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(.EADDRINUSE) }
        // Wake up every 100 ms to notice close(); the datagrams themselves arrive at once.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in receiveLoop() }
        thread.start()
    }

    private func receiveLoop() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            lock.lock()
            let stop = closed
            lock.unlock()
            if stop { return }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { continue }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            lock.lock()
            messages.append(text)
            history.append(text)
            lock.broadcast()
            lock.unlock()
        }
    }

    /// Waits until a datagram has a line starting with `prefix`; returns that line.
    public func waitForLine(startingWith prefix: String, timeout: TimeInterval = 60) async -> String? {
        await waitForLine(timeout: timeout) { $0.hasPrefix(prefix) }
    }

    /// Waits until a datagram — the `after`-th received or a later one — has a line that `matches`; returns that line.
    public func waitForLine(
        after: Int = 0, timeout: TimeInterval = 60, where matches: @escaping @Sendable (String) -> Bool
    ) async -> String? {
        await withCheckedContinuation { continuation in
            Thread {
                self.lock.lock()
                defer { self.lock.unlock() }
                let deadline = Date().addingTimeInterval(timeout)
                while true {
                    let lines = self.history.dropFirst(after).flatMap { $0.split(separator: "\n").map(String.init) }
                    if let found = lines.first(where: matches) {
                        continuation.resume(returning: found)
                        return
                    }
                    if !self.lock.wait(until: deadline) {
                        continuation.resume(returning: nil)
                        return
                    }
                }
            }.start()
        }
    }

    /// Waits (on a separate thread, at most `timeout`) until a datagram contains `line`; true when one did.
    public func wait(for line: String, timeout: TimeInterval = 60) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread {
                self.lock.lock()
                let deadline = Date().addingTimeInterval(timeout)
                var found = false
                while !found {
                    found = self.messages.contains { $0.split(separator: "\n").contains(Substring(line)) }
                    if found || !self.lock.wait(until: deadline) { break }
                }
                if !found { found = self.messages.contains { $0.split(separator: "\n").contains(Substring(line)) } }
                // Consume what was seen, so the next wait (e.g. after a restart) needs a new datagram.
                if found { self.messages.removeAll() }
                self.lock.unlock()
                continuation.resume(returning: found)
            }.start()
        }
    }

    /// How many datagrams have arrived so far (for `waitForLine(after:timeout:where:)`).
    public var datagramCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return history.count
    }

    public var received: [String] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }

    /// Stops the receiving thread and removes the socket.
    public func close() {
        lock.lock()
        closed = true
        lock.unlock()
        unlink(path)
    }

    deinit { Glibc.close(descriptor) }
}
