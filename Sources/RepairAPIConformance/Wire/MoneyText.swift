internal import RepairSyncModels
public import RepairSyncProtocol

/// Judges a money value as it appeared on the wire (docs/api.md section 2.3).
///
/// Money is exact decimal text, sent as a JSON string (`"149.99"`) or, which clients must also accept, a JSON number
/// with exact digits (`149.99`). What gives a binary float away is its digits: an amount that went through a
/// `double` and was printed with 17 significant digits reads `149.99000000000001` or `99.989999999999995`, and one
/// that was summed in floating point reads `0.30000000000000004`. Real amounts never carry 16 or more significant
/// digits that end in such noise, so those are refused; every shorter decimal is accepted exactly as written.
///
/// ```swift
/// MoneyText.problem(.string("149.99"))             // nil
/// MoneyText.problem(.number("149.99000000000001"))  // "149.99000000000001 is the double nearest 149.99 printed …"
/// ```
public enum MoneyText {
    /// Why the value is not exact money, or nil when it is.
    public static func problem(_ value: JSONValue) -> String? {
        let text: String
        switch value {
        case .string(let string): text = string
        case .number(let literal): text = literal
        default: return "\(value.brief) is \(value.typeName), not money (a decimal string or number)"
        }
        guard Money(exactly: text) != nil else {
            return "\(value.brief) is not plain decimal text (digits, one optional dot, optional leading minus)"
        }
        if let origin = binaryFloatOrigin(text) {
            return "\(text) \(origin): money went through binary floating point"
        }
        return nil
    }

    /// How the text shows binary floating point (`is the double nearest 149.99 printed to 17 digits` for
    /// `149.99000000000001`), or nil for an amount that shows no sign of it.
    static func binaryFloatOrigin(_ text: String) -> String? {
        let unsigned = text.hasPrefix("-") ? String(text.dropFirst()) : text
        let parts = unsigned.split(separator: ".", omittingEmptySubsequences: false)
        let integer = String(parts[0])
        var fraction = parts.count > 1 ? String(parts[1]) : ""
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let significant = (integer + fraction).drop { $0 == "0" }
        guard significant.count >= 16, let double = Double(text) else { return nil }
        // A double printed with more digits than its shortest round-trip form: `%.17g` output (never more than 17
        // significant digits; longer text is decimal by construction).
        let shortest = "\(double)"
        if significant.count <= 17, !shortest.contains("e") {
            let shortestDigits = shortest.filter(\.isNumber).drop { $0 == "0" }
            let trimmed = shortestDigits.reversed().drop { $0 == "0" }
            if trimmed.count < significant.count {
                let nearest = shortest.hasSuffix(".0") ? String(shortest.dropLast(2)) : shortest
                return "is the double nearest \(nearest) printed to \(significant.count) digits"
            }
        }
        // Floating-point arithmetic: a long run of 0s or 9s in the fraction, then a few stray digits.
        for noise in ["000000", "999999"] {
            guard let run = fraction.firstRange(of: noise) else { continue }
            let tail = fraction[run.upperBound...].drop { $0 == noise.first }
            if tail.count <= 3 { return "ends in floating-point noise (\(noise.prefix(3))… then \(tail))" }
        }
        return nil
    }
}
