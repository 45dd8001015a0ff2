/// A fraction written with exactly three decimals (`0.400`, `1.000`): the status's progress, the stats' rates.
public struct Thousandths: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The value times 1000, rounded.
    public var thousandths: Int

    public init(_ value: Double) { thousandths = Int((value * 1000).rounded()) }
    public init(thousandths: Int) { self.thousandths = thousandths }

    public var value: Double { Double(thousandths) / 1000 }

    /// `0.400`, `-1.250`.
    public var description: String {
        let magnitude = thousandths.magnitude
        let fraction = String(magnitude % 1000)
        return (thousandths < 0 ? "-" : "") + "\(magnitude / 1000)." + String(repeating: "0", count: 3 - fraction.count)
            + fraction
    }

    public static func < (lhs: Thousandths, rhs: Thousandths) -> Bool { lhs.thousandths < rhs.thousandths }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(try container.decode(Double.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(JSONValue.number(description))
    }
}
