import RepairSyncProtocol
import Testing

/// The control socket's parser: correct on valid JSON, bounded and clear on hostile input.
@Suite("JSON parser")
struct JSONParserTests {
    let parser = JSONParser()

    @Test("parses every JSON type, keeps key order and exact number literals, round-trips through serialized")
    func roundTrip() throws {
        let text = #"{"b":1,"a":[true,false,null,-0.5e+3,12345678901234567890],"s":"é\n\"\\\u0001 😀","o":{}}"#
        let value = try parser.parse(text)
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["b", "a", "s", "o"])
        #expect(
            value["a"]
                == .array([.bool(true), .bool(false), .null, .number("-0.5e+3"), .number("12345678901234567890")]))
        #expect(value["s"]?.stringValue == "é\n\"\\\u{01} 😀")
        #expect(try parser.parse(value.serialized) == value)
        #expect(!value.serialized.contains("\n"), "a reply must fit on one line")
    }

    @Test("surrogate pairs in escapes decode to one character; a lone surrogate is refused")
    func surrogates() throws {
        #expect(try parser.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(throws: JSONParser.Failure.self) { try parser.parse(#""\ud83d""#) }
        #expect(throws: JSONParser.Failure.self) { try parser.parse(#""\ude00""#) }
    }

    @Test(
        "malformed text is a syntax error with a position",
        arguments: [
            "", "{", "[1,]", "{\"a\":}", "{\"a\" 1}", "01", "1.", "-", "tru", "\"abc", "[1 2]", "{} {}", "'a'",
            "{\"a\":1,}", "\"tab\there\"", "NaN", "1e", "[\"\\x\"]",
        ])
    func syntaxErrors(text: String) {
        do {
            _ = try parser.parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.isSyntaxError, "\(text): \(error)")
        }
    }

    @Test("invalid UTF-8 (stray continuation, overlong, surrogate, truncated) is refused")
    func invalidUTF8() {
        let cases: [[UInt8]] = [
            [0x22, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22],
            [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],
        ]
        for bytes in cases {
            #expect(throws: JSONParser.Failure.self, "\(bytes)") { try parser.parse(bytes) }
        }
    }

    @Test("nesting is limited to 64 levels; 100,000 levels fail fast without exhausting the stack")
    func depth() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parser.parse(ok) }
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParser.Failure.tooDeep(limit: 64)) { try parser.parse(deep) }
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(throws: JSONParser.Failure.tooDeep(limit: 64)) { try parser.parse(hostile) }
    }

    @Test("number literals longer than the limit and duplicate keys are refused")
    func limits() {
        #expect(throws: JSONParser.Failure.numberTooLong(limit: 100)) {
            try parser.parse(String(repeating: "9", count: 101))
        }
        #expect(throws: JSONParser.Failure.duplicateKey("id")) { try parser.parse(#"{"id":1,"id":2}"#) }
    }
}
