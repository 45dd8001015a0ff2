import Foundation
import RepairSyncModels
import Testing

@Suite struct MoneyTests {
    @Test func additionIsExact() throws {
        let sum = try #require(Money(exactly: "0.1")) + (try #require(Money(exactly: "0.2")))
        #expect(sum == Money(exactly: "0.3"))
        #expect(sum.canonicalText == "0.3")
        // The same sum in Double is not 0.3: the point of never using Double for money.
        #expect(0.1 + 0.2 != 0.3)
    }

    @Test(arguments: ["1234567.89", "0.3", "-0.5", "150", "99999999999999999.99", "0.01"])
    func canonicalTextRoundTrips(text: String) throws {
        let money = try #require(Money(exactly: text))
        #expect(money.canonicalText == text)
        #expect(Money(exactly: money.canonicalText) == money)
    }

    @Test func trailingZerosAreNotSignificant() throws {
        #expect(Money(exactly: "150.00")?.canonicalText == "150")
        #expect(Money(exactly: "150.00") == Money(exactly: "150"))
        #expect(Money(exactly: "0.30")?.displayText == "0.30")
        #expect(Money(exactly: "150")?.displayText == "150.00")
        #expect(Money(exactly: "12.345")?.displayText == "12.345")
    }

    @Test(arguments: ["", "-", "12abc", " 12", "12 ", "1e3", "1.", ".5", "1,000.00", "--1", "1.2.3", "NaN", "+1"])
    func rejectsAnythingButPlainDecimals(text: String) {
        #expect(Money(exactly: text) == nil)
    }

    @Test func decodesFromStringsAndNumbersExactly() throws {
        struct Box: Codable { var amount: Money }
        let fromString = try JSONDecoder().decode(Box.self, from: Data(#"{"amount":"1234567.89"}"#.utf8))
        let fromNumber = try JSONDecoder().decode(Box.self, from: Data(#"{"amount":1234567.89}"#.utf8))
        #expect(fromString.amount == Money(exactly: "1234567.89"))
        #expect(fromNumber.amount == Money(exactly: "1234567.89"))
        let tenth = try JSONDecoder().decode(Box.self, from: Data(#"{"amount":0.1}"#.utf8))
        #expect(tenth.amount.canonicalText == "0.1")
    }

    @Test func encodesAsCanonicalString() throws {
        struct Box: Codable { var amount: Money }
        let data = try JSONEncoder().encode(Box(amount: try #require(Money(exactly: "0.30"))))
        #expect(String(decoding: data, as: UTF8.self) == #"{"amount":"0.3"}"#)
    }

    @Test func malformedAmountIsADecodingError() {
        struct Box: Codable { var amount: Money }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Box.self, from: Data(#"{"amount":"12abc"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Box.self, from: Data(#"{"amount":true}"#.utf8))
        }
    }

    @Test("the short-text parser builds the very Decimal that Decimal(string:) does: equal, same hash, same text")
    func shortParserAgreesWithDecimal() throws {
        var texts = [
            "0", "0.00", "-0", "-0.00", "1", "10", "100.10", "149.99", "-12.5", "999999999999999999",
            "0.000000000000000001", "123456789.123456789", "1234567890123456789", "-99999999999999999.99",
        ]
        var state: UInt64 = 42
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let cents = Int64(bitPattern: state >> 20) % 100_000_000
            texts.append(String(format: "%lld.%02lld", cents / 100, abs(cents % 100)))
        }
        let posix = Locale(identifier: "en_US_POSIX")
        for text in texts {
            let money = try #require(Money(exactly: text), "\(text)")
            let reference = try #require(Decimal(string: text, locale: posix))
            #expect(money.amount == reference, "\(text)")
            #expect(money.amount.hashValue == reference.hashValue, "\(text)")
            #expect(money.canonicalText == reference.description, "\(text)")
        }
    }
}
