#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An exact amount of money.
///
/// Money never passes through `Double`: it is a `Decimal`, read from JSON strings (`"149.99"`, what the server
/// sends) or JSON numbers (which Foundation's decoder reads digit by digit), and written as canonical decimal text.
///
/// The canonical text is the shortest exact form of the value: `"149.99"`, `"150"`, `"-0.5"`. Two equal amounts
/// always have the same text, so the text can be compared for equality in SQL.
///
/// ```swift
/// let price = Money(exactly: "0.1")! + Money(exactly: "0.2")!
/// price.canonicalText  // "0.3"
/// ```
public struct Money: Sendable, Hashable, Comparable {
    public var amount: Decimal

    public init(_ amount: Decimal) {
        self.amount = amount
    }

    /// Parses plain decimal text: an optional `-`, digits, optionally `.` and digits. Nothing else is accepted
    /// (no spaces, exponents, thousands separators or trailing garbage), unlike `Decimal(string:)`.
    public init?(exactly text: some StringProtocol) {
        guard Money.isPlainDecimal(text.utf8) else { return nil }
        if let value = Money.parseShort(text.utf8) {
            self.amount = value
            return
        }
        guard let value = Decimal(string: String(text), locale: Money.posix), !value.isNaN else { return nil }
        self.amount = value
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// Plain decimal text of up to 18 digits (every amount a shop sees): the digits fit a UInt64 significand, so the
    /// value is built exactly without Decimal's string parser (which dominated page decoding). Nil for longer text.
    private static func parseShort(_ bytes: some Collection<UInt8>) -> Decimal? {
        var negative = false
        var significand: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var afterDot = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "."): afterDot = true
            default:
                digits += 1
                guard digits <= 18 else { return nil }
                significand = significand * 10 + UInt64(byte &- UInt8(ascii: "0"))
                if afterDot { fractionDigits += 1 }
            }
        }
        // Decimal's negative zero is its NaN: zero is zero whatever its sign and scale.
        guard significand != 0 else { return Decimal(0) }
        return Decimal(sign: negative ? .minus : .plus, exponent: -fractionDigits, significand: Decimal(significand))
    }

    public static let zero = Money(Decimal(0))

    /// The shortest exact decimal text of the amount, e.g. `"1234567.89"`.
    public var canonicalText: String {
        amount.description
    }

    /// The amount with at least two fraction digits, for people: `"150.00"`, `"0.30"`, `"12.345"`.
    public var displayText: String {
        var text = canonicalText
        guard let dot = text.firstIndex(of: ".") else { return text + ".00" }
        let fractionDigits = text.distance(from: dot, to: text.endIndex) - 1
        if fractionDigits < 2 { text += String(repeating: "0", count: 2 - fractionDigits) }
        return text
    }

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.amount < rhs.amount }
    public static func + (lhs: Money, rhs: Money) -> Money { Money(lhs.amount + rhs.amount) }
    public static func - (lhs: Money, rhs: Money) -> Money { Money(lhs.amount - rhs.amount) }

    private static func isPlainDecimal(_ bytes: some Collection<UInt8>) -> Bool {
        var sawDigit = false
        var sawDot = false
        var digitsAfterDot = 0
        for (offset, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "-") where offset == 0:
                continue
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
                if sawDot { digitsAfterDot += 1 }
            case UInt8(ascii: ".") where sawDigit && !sawDot:
                sawDot = true
            default:
                return false
            }
        }
        // Decimal holds 38 significant digits; refuse what it would round.
        return sawDigit && (!sawDot || digitsAfterDot > 0) && bytes.count <= 40
    }
}

extension Money: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let money = Money(exactly: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "\"\(text)\" is not a decimal amount")
            }
            self = money
        } else {
            // A JSON number: Foundation's JSONDecoder parses it into Decimal from its digits, exactly.
            let value = try container.decode(Decimal.self)
            guard !value.isNaN else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "amount is not a number")
            }
            self.amount = value
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(canonicalText)
    }
}

extension Money: CustomStringConvertible {
    public var description: String { canonicalText }
}
