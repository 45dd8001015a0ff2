#if canImport(Glibc)
    import Glibc
#endif

/// The floor of `repairctl status --badge` in scripts/bench: the least a Swift program built the same way (release,
/// the same toolchain and flags) can do to show the badge — connect to the socket, send `status`, read the reply
/// line, print the pending count. No argument parsing, no JSON parser, no Foundation: what is left is process
/// start, the Swift runtime and one round trip. Built, never installed.
@main
enum BadgeFloor {
    static func main() {
        let path = getenv("REPAIRSYNCD_SOCKET").map { String(cString: $0) } ?? "/run/repairsyncd/control.sock"
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard descriptor >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { exit(1) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { exit(1) }
        let request = Array(#"{"jsonrpc":"2.0","method":"status","id":1}"#.utf8) + [0x0A]
        guard request.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == request.count else { exit(1) }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while !reply.contains(0x0A) {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { exit(1) }
            reply += chunk[..<count]
        }
        close(descriptor)
        // The digits after the first `"pending":` of the reply.
        let key = Array(#""pending":"#.utf8)
        guard let start = (0...(reply.count - key.count)).first(where: { Array(reply[$0..<($0 + key.count)]) == key })
        else { exit(1) }
        let digits = reply[(start + key.count)...].prefix { (0x30...0x39).contains($0) }
        print(String(decoding: digits, as: UTF8.self))
    }
}
