import Foundation
import RepairSyncModels
import Testing

@Suite struct TimestampTests {
    @Test func formatsFixedWidthUTCWithMilliseconds() throws {
        let t = try #require(Timestamp(rfc3339: "2026-11-22T13:05:09.12Z"))
        #expect(t.rfc3339 == "2026-11-22T13:05:09.120Z")
        #expect(Timestamp(millisecondsSince1970: 0).rfc3339 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
    }

    @Test func convertsOffsetsToUTC() throws {
        let local = try #require(Timestamp(rfc3339: "2026-11-22T14:05:09.5+01:00"))
        #expect(local.rfc3339 == "2026-11-22T13:05:09.500Z")
        let west = try #require(Timestamp(rfc3339: "2026-02-28T23:30:00-01:00"))
        #expect(west.rfc3339 == "2026-03-01T00:30:00.000Z")
    }

    @Test func truncatesBeyondMilliseconds() throws {
        #expect(Timestamp(rfc3339: "2026-11-22T13:05:09.123999Z")?.rfc3339 == "2026-11-22T13:05:09.123Z")
    }

    @Test func agreesWithFoundation() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for millis: Int64 in [0, 951_782_400_000, 1_582_934_400_123, 1_795_000_000_999, 4_102_444_800_000] {
            let t = Timestamp(millisecondsSince1970: millis)
            #expect(formatter.date(from: t.rfc3339) == t.date)
            #expect(Timestamp(rfc3339: t.rfc3339) == t)
        }
    }

    @Test func textOrderIsTimeOrder() throws {
        let texts = [
            "2026-11-22T13:05:09.120Z", "2026-11-22T13:05:09.9Z", "2026-11-22T12:05:09.000-02:00",
            "1999-12-31T23:59:59.999Z", "2026-11-22T13:05:10Z",
        ]
        let stamps = try texts.map { try #require(Timestamp(rfc3339: $0)) }
        #expect(stamps.sorted().map(\.rfc3339) == stamps.map(\.rfc3339).sorted())
    }

    @Test(arguments: [
        "", "2026-11-22", "2026-11-22T13:05:09", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-22T24:00:00Z", "2026-11-22T13:05:09.Z", "2026-11-22T13:05:09Zjunk", "2026-11-22T13:05:09+0100",
        "twenty-six",
    ])
    func rejectsMalformedText(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test func leapDayOnlyInLeapYears() {
        #expect(Timestamp(rfc3339: "2024-02-29T00:00:00Z") != nil)
        #expect(Timestamp(rfc3339: "2026-02-29T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2000-02-29T00:00:00Z") != nil)
        #expect(Timestamp(rfc3339: "1900-02-29T00:00:00Z") == nil)
    }
}

@Suite("HTTP dates")
struct HTTPDateTests {
    @Test("IMF-fixdate of known instants (RFC 9110's example, a leap day, before 1970)")
    func knownInstants() {
        #expect(Timestamp(millisecondsSince1970: 784_111_777_000).httpDate == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(Timestamp(millisecondsSince1970: 1_709_208_000_999).httpDate == "Thu, 29 Feb 2024 12:00:00 GMT")
        #expect(Timestamp(millisecondsSince1970: -1000).httpDate == "Wed, 31 Dec 1969 23:59:59 GMT")
    }
}
