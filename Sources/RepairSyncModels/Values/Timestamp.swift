#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A point in time with millisecond precision, exact and totally ordered.
///
/// On the wire and in the store a timestamp is RFC 3339 text in UTC with exactly three fraction digits,
/// `2026-11-22T13:05:09.120Z`. That text has a fixed width, so comparing two of them as strings (in SQL, in
/// `ORDER BY`) orders them in time. Parsing accepts any RFC 3339 timestamp: other offsets are converted to UTC
/// and fraction digits beyond the millisecond are truncated.
///
/// Stored as integer milliseconds since the Unix epoch, so no floating point rounding can move it.
public struct Timestamp: Sendable, Hashable, Comparable {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public init(_ date: Date) {
        self.millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    public static func now() -> Timestamp { Timestamp(Date()) }

    public var date: Date {
        Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + milliseconds)
    }

    /// `yyyy-MM-ddTHH:mm:ss.SSSZ`, always 24 characters for years 0000...9999.
    public var rfc3339: String {
        let millisPerDay: Int64 = 86_400_000
        var days = millisecondsSince1970 / millisPerDay
        var millisOfDay = millisecondsSince1970 % millisPerDay
        if millisOfDay < 0 {
            millisOfDay += millisPerDay
            days -= 1
        }
        let (year, month, day) = Timestamp.civil(fromDays: days)
        let seconds = millisOfDay / 1000
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, _ at: Int, _ width: Int) {
            var v = value
            for i in stride(from: at + width - 1, through: at, by: -1) {
                bytes[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
        }
        put(year, 0, 4)
        bytes[4] = UInt8(ascii: "-")
        put(month, 5, 2)
        bytes[7] = UInt8(ascii: "-")
        put(day, 8, 2)
        bytes[10] = UInt8(ascii: "T")
        put(seconds / 3600, 11, 2)
        bytes[13] = UInt8(ascii: ":")
        put(seconds / 60 % 60, 14, 2)
        bytes[16] = UInt8(ascii: ":")
        put(seconds % 60, 17, 2)
        bytes[19] = UInt8(ascii: ".")
        put(millisOfDay % 1000, 20, 3)
        bytes[23] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses RFC 3339 (`2026-11-22T13:05:09Z`, `2026-11-22T14:05:09.5+01:00`, ...). Returns nil for anything else.
    public init?(rfc3339 text: some StringProtocol) {
        var parser = Parser(bytes: Array(text.utf8))
        guard let millis = parser.parse() else { return nil }
        self.millisecondsSince1970 = millis
    }

    // Howard Hinnant's days_from_civil / civil_from_days, exact for the proleptic Gregorian calendar.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (month <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, month, day)
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<width {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }

        mutating func expect(_ allowed: String) -> Bool {
            guard index < bytes.count, allowed.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }

        mutating func parse() -> Int64? {
            guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
                expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
                let second = number(2)
            else { return nil }
            guard (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute),
                (0...60).contains(second)  // 60: a leap second, folded into the next minute below
            else { return nil }
            let daysInMonth: [Int64] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            guard day >= 1, day <= daysInMonth[Int(month - 1)] + (month == 2 && leap ? 1 : 0) else { return nil }
            var millis: Int64 = 0
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                var digits = 0
                while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                    if digits < 3 { millis = millis * 10 + Int64(bytes[index] - UInt8(ascii: "0")) }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<max(digits, 3) { millis *= 10 }
            }
            var offsetMinutes: Int64 = 0
            if expect("Zz") {
                // UTC
            } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
                guard let oh = number(2), expect(":"), let om = number(2), oh <= 23, om <= 59 else { return nil }
                offsetMinutes = sign * (oh * 60 + om)
            } else {
                return nil
            }
            guard index == bytes.count else { return nil }
            let days = Timestamp.days(fromCivil: year, month, day)
            let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
            return seconds * 1000 + millis
        }
    }
}

extension Timestamp: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Timestamp(rfc3339: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not an RFC 3339 timestamp")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rfc3339)
    }
}

extension Timestamp: CustomStringConvertible {
    public var description: String { rfc3339 }
}
