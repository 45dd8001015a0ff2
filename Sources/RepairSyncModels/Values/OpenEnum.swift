/// A set of string values sent by the server that this version knows, open to values it does not.
///
/// A value the server sends that this version does not know is kept as `unrecognized(raw)`, stored and sent back
/// exactly as received: a newer server can add a status without breaking decoding or losing data.
public protocol OpenEnum: RawRepresentable<String>, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The values this version knows, in their natural order.
    static var known: [Self] { get }
    /// Wraps a value this version does not know.
    static func unrecognized(_ raw: String) -> Self
    /// A short name for people.
    var displayName: String { get }
}

extension OpenEnum {
    public init(rawValue: String) {
        self = Self.parse(rawValue)
    }

    /// The known value with this raw value, else `unrecognized(raw)`. Never fails.
    public static func parse(_ raw: String) -> Self {
        known.first { $0.rawValue == raw } ?? unrecognized(raw)
    }

    public var isKnown: Bool { Self.known.contains(self) }

    public init(from decoder: any Decoder) throws {
        self = Self.parse(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    /// "awaiting_parts" → "Awaiting parts": how an unknown value is shown until this version learns its name.
    static func humanized(_ raw: String) -> String {
        let words = String(raw.map { $0 == "_" ? " " : $0 })
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}
