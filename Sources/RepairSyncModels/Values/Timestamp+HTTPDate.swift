extension Timestamp {
    /// IMF-fixdate, as in HTTP `Date` and `Retry-After` headers: `Sun, 06 Nov 1994 08:49:37 GMT` (whole seconds,
    /// rounded down).
    public var httpDate: String {
        let seconds = millisecondsSince1970 >= 0 ? millisecondsSince1970 / 1000 : (millisecondsSince1970 - 999) / 1000
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondsOfDay = seconds - days * 86400
        let (year, month, day) = Self.civil(fromDays: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(months[Int(month) - 1]) \(year) \(two(secondsOfDay / 3600)):"
            + "\(two(secondsOfDay % 3600 / 60)):\(two(secondsOfDay % 60)) GMT"
    }
}
