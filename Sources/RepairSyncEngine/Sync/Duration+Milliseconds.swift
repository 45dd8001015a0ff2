extension Duration {
    /// Whole milliseconds, rounded up (a wait is never shortened).
    var inMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}
