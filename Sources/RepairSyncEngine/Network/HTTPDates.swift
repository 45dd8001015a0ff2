public import Foundation

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), as in `Date` and `Retry-After` headers: how the engine reads them,
/// public so that `repair-api-conformance` judges a server's headers by the same rules.
///
/// ```swift
/// HTTPDates.retryAfter("120", now: Date())                            // .seconds(120)
/// HTTPDates.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: date)    // the time from `date` to then, or zero
/// ```
public enum HTTPDates {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func parse(_ text: String) -> Date? {
        // "Sun, 06 Nov 1994 08:49:37 GMT"
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3 else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (year, month + 1, day)
        (components.hour, components.minute, components.second) = (clock[0], clock[1], clock[2])
        return components.date
    }

    /// `Retry-After: 120` or `Retry-After: <HTTP date>` → how long to wait from `now`; nil for anything else.
    public static func retryAfter(_ text: String, now: Date) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        guard let date = parse(trimmed) else { return nil }
        return .milliseconds(max(0, Int64((date.timeIntervalSince(now) * 1000).rounded(.up))))
    }
}
