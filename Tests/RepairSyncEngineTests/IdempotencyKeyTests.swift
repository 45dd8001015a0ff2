import Foundation
import Testing

@testable import RepairSyncEngine

/// The idempotency keys queued changes are sent with: random version-4 UUIDs, in lower case, never repeated.
@Suite struct IdempotencyKeyTests {
    @Test("keys are lower-case version-4 UUIDs of the RFC 4122 variant, and 10,000 of them are all different")
    func keysAreRandomUUIDs() {
        let keys = (0..<10_000).map { _ in Outbox.newKey() }
        #expect(Set(keys).count == keys.count)
        for key in keys.prefix(100) {
            #expect(key == key.lowercased())
            #expect(UUID(uuidString: key)?.uuidString.lowercased() == key, "\(key) reads back as the same UUID")
            let characters = Array(key)
            #expect(characters.count == 36 && characters[14] == "4", "version 4: \(key)")
            #expect("89ab".contains(characters[19]), "RFC 4122 variant: \(key)")
        }
    }
}
