import Foundation
import Synchronization
import Testing

@testable import RepairSyncEngine

/// The idempotency keys queued changes are sent with: time-ordered (version-7) UUIDs in lower case, never repeated,
/// each sorting after the one made before it.
@Suite struct IdempotencyKeyTests {
    @Test("keys are lower-case version-7 UUIDs of the RFC 9562 variant, and 10,000 of them are all different")
    func keysAreTimeOrderedUUIDs() {
        let keys = (0..<10_000).map { _ in IdempotencyKey.next() }
        #expect(Set(keys).count == keys.count)
        for key in keys.prefix(100) {
            #expect(key == key.lowercased())
            #expect(UUID(uuidString: key)?.uuidString.lowercased() == key, "\(key) reads back as the same UUID")
            let characters = Array(key)
            #expect(characters.count == 36 && characters[14] == "7", "version 7: \(key)")
            #expect("89ab".contains(characters[19]), "RFC 9562 variant: \(key)")
        }
    }

    @Test("each key sorts after the one made before it (as SQLite compares text), so new keys go to the index's end")
    func keysFollowEachOther() {
        let keys = (0..<10_000).map { _ in IdempotencyKey.next() }
        let outOfOrder = zip(keys, keys.dropFirst()).filter {
            Array($0.utf8).lexicographicallyPrecedes($1.utf8) == false
        }
        #expect(outOfOrder.isEmpty, "first out of order: \(outOfOrder.first.map { "\($0) then \($1)" } ?? "")")
    }

    @Test(
        "a clock that stands still or goes back: the keys still follow each other, and carry the clock again once it passes them"
    )
    func clockGoingBack() {
        let readings = Mutex<[UInt64]>([5000 << 12, 5000 << 12, 4000 << 12, 4000 << 12, 6000 << 12])
        let generator = IdempotencyKey.Generator(clock: { readings.withLock { $0.removeFirst() } })
        let keys = (0..<5).map { _ in generator.next() }
        #expect(keys == keys.sorted() && Set(keys).count == 5, "\(keys)")
        #expect(
            keys.map { String($0.prefix(8) + $0.dropFirst(9).prefix(4)) } == [
                "000000001388", "000000001388", "000000001388", "000000001388", "000000001770",
            ])
    }

    @Test("the key's first 48 bits are the wall clock's milliseconds")
    func keysCarryTheTime() throws {
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        let key = IdempotencyKey.next()
        let after = UInt64(Date().timeIntervalSince1970 * 1000)
        let hex = key.replacingOccurrences(of: "-", with: "").prefix(12)
        let milliseconds = try #require(UInt64(hex, radix: 16))
        #expect(milliseconds >= before && milliseconds <= after + 1, "\(milliseconds) not within \(before)...\(after)")
    }

    @Test("the layout: milliseconds, version and fraction, variant and 62 random bits")
    func layout() {
        let key = IdempotencyKey.format(stamp: 0x0123_4567_89AB_CDE, random: 0xFFFF_EEEE_DDDD_CCCC)
        #expect(key == "01234567-89ab-7cde-bfff-eeeeddddcccc")
        #expect(IdempotencyKey.format(stamp: 0, random: 0) == "00000000-0000-7000-8000-000000000000")
    }
}
