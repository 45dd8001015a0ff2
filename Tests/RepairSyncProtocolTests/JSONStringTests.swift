import Foundation
import RepairSyncProtocol
import Testing

/// The project's one string escaper, in both its styles.
@Suite("JSON string escaper")
struct JSONStringTests {
    @Test("line-safe: no raw newline, control character or line separator survives, and the parser reads it back")
    func lineSafe() throws {
        let text = "a\"b\\c\nd\re\tf\u{01}g\u{2028}h\u{2029}/é😀"
        let quoted = JSONString.quoted(text)
        #expect(quoted == #""a\"b\\c\nd\re\tf\u0001g\u2028h\u2029/é😀""#)
        #expect(!quoted.contains("\n") && !quoted.contains("\u{2028}"))
        #expect(try JSONParser().parse(quoted) == .string(text))
    }

    @Test("foundation style: byte for byte what JSONSerialization writes")
    func foundation() throws {
        let samples = ["plain", "a/b", "\u{08}\u{0C}\u{1F}", "quote \" back \\ ", "line\nfeed\r\ttab", "\u{2028}é😀"]
        for sample in samples {
            let reference = String(decoding: try JSONSerialization.data(withJSONObject: [sample]), as: UTF8.self)
            #expect(
                "[" + JSONString.quoted(sample, style: .foundation) + "]" == reference, "\(sample.debugDescription)")
        }
    }
}
