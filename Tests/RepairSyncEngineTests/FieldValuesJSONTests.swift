import Foundation
import Testing

@testable import RepairSyncEngine

/// The hand-written field encoder writes exactly what JSONSerialization writes: the text is a PATCH body, and a
/// replayed request must repeat the bytes of the original.
@Suite struct FieldValuesJSONTests {
    @Test("byte for byte what JSONSerialization with sorted keys writes, for every kind of character")
    func matchesFoundation() throws {
        let pieces = [
            "", "plain", "Screen replaced, ready for collection", "quote \" inside", "back\\slash", "a/b</script>",
            "line\nbreak", "tab\there", "cr\rlf", "\u{08}\u{0C}", "\u{00}\u{01}\u{1F}\u{7F}", "Chloé Müller", "日本語",
            "emoji 📱🔧", "e\u{301} combining", "\u{2028}\u{2029}", "€ 149.99",
        ]
        var cases: [FieldValues] = [[:], ["notes": nil], ["status": "ready", "notes": nil, "diagnosis": "x"]]
        for piece in pieces {
            cases.append(["notes": piece])
            cases.append(["status": "in_repair", "diagnosis": piece, "resolution": nil])
        }
        var state: UInt64 = 7
        for _ in 0..<300 {
            var text = ""
            for _ in 0..<12 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let piece = pieces[Int(state >> 33) % pieces.count]
                text += piece.isEmpty ? String(UnicodeScalar(UInt8(state >> 58))) : piece
            }
            cases.append(["content": text, "ticket_id": "tkt_1", "is_internal": "false"])
        }
        for values in cases {
            #expect(FieldValuesJSON.encode(values) == FieldValuesJSON.encodeWithFoundation(values), "\(values)")
            #expect(try FieldValuesJSON.decode(FieldValuesJSON.encode(values)) == values)
        }
    }

    @Test(
        "the values of changes gone in doubt: byte for byte what JSONSerialization with sorted keys wrote there before")
    func inDoubtMatchesFoundation() throws {
        let pieces = ["", "ready", "quote \" and \\", "line\nbreak\u{01}", "Chloé 📱", "\u{2028}", "a/b"]
        var state: UInt64 = 11
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        for _ in 0..<500 {
            var values: [String: [String?]] = [:]
            for field in ["status", "notes", "diagnosis"].prefix(next() % 4) {
                values[field] = (0..<(1 + next() % 3)).map { _ in
                    next() % 5 == 0 ? nil : pieces[next() % pieces.count] + pieces[next() % pieces.count]
                }
            }
            let object = values.mapValues { $0.map { $0.map { $0 as Any } ?? NSNull() } }
            let foundation = String(
                decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            #expect(FieldValuesJSON.encodeInDoubt(values) == foundation, "\(values)")
        }
    }
}
