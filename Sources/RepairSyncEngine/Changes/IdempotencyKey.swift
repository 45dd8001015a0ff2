internal import Foundation
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// The idempotency keys queued changes are sent with: time-ordered (version 7, RFC 9562) UUIDs in lower case.
///
/// The key is what makes a retried write safe; the server only needs it unique (docs/api.md: 1–255 printable ASCII
/// characters). Time-ordered rather than random for the store's sake: `outbox.idempotency_key` is `UNIQUE`, and a
/// random key lands every new entry in another leaf of that index — one more page written to the WAL, copied and
/// checksummed for each queued change. Keys made in order land in the index's last leaf, which one commit writes
/// once for all its changes.
///
/// The first 48 bits are the wall clock's milliseconds, the next 12 its fraction of a millisecond (RFC 9562's "increased
/// clock precision"), raised by one whenever the clock has not moved on since the last key or went back — so keys made
/// here follow each other even across a clock step; the last 62 bits are random (`getrandom`), which is what keeps two
/// workstations' keys, or keys made across a restart with the clock set back, apart.
enum IdempotencyKey {
    /// The keys this process makes.
    private static let shared = Generator(clock: clockStamp)

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func next() -> String { shared.next() }

    /// Keys that follow each other: each one's time stamp after the last one's, whatever the clock says.
    final class Generator: Sendable {
        private let clock: @Sendable () -> UInt64
        /// The last key's 60-bit time stamp (milliseconds and twelve bits of fraction).
        private let lastStamp = Mutex<UInt64>(0)

        init(clock: @escaping @Sendable () -> UInt64) { self.clock = clock }

        func next() -> String {
            let stamp = lastStamp.withLock { last in
                last = max(clock(), last &+ 1)
                return last
            }
            var generator = SystemRandomNumberGenerator()
            return IdempotencyKey.format(stamp: stamp, random: generator.next())
        }
    }

    /// The wall clock as milliseconds since 1970 (48 bits) followed by 12 bits of the millisecond's fraction.
    @Sendable static func clockStamp() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = UInt64(now.tv_sec) &* 1000 &+ UInt64(now.tv_nsec / 1_000_000)
        let fraction = UInt64(now.tv_nsec % 1_000_000) &* 4096 / 1_000_000
        return (milliseconds & 0xFFFF_FFFF_FFFF) << 12 | fraction
    }

    /// 8-4-4-4-12 hexadecimal digits in lower case, written out here from two words (no array, no `UUID`:
    /// `UUID.uuidString` and then `lowercased()` were two strings built for every queued change).
    static func format(stamp: UInt64, random: UInt64) -> String {
        // Milliseconds, the version (7: time-ordered) and the fraction; the RFC 9562 variant and 62 random bits.
        let high = (stamp >> 12 & 0xFFFF_FFFF_FFFF) << 16 | 0x7000 | stamp & 0xFFF
        let low = 0x8000_0000_0000_0000 | random & 0x3FFF_FFFF_FFFF_FFFF
        return String(unsafeUninitializedCapacity: 36) { text in
            var at = 0
            for digit in 0..<32 {
                if digit == 8 || digit == 12 || digit == 16 || digit == 20 {
                    text[at] = UInt8(ascii: "-")
                    at += 1
                }
                let word = digit < 16 ? high : low
                text[at] = hexDigits[Int(word >> UInt64(60 - 4 * (digit % 16)) & 0xF)]
                at += 1
            }
            return at
        }
    }
}
