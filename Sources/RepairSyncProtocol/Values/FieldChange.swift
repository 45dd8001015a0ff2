/// What a local edit does to one field: set it, or clear it (`null` on the wire). A field left out of the params is
/// not changed at all, which is why this is not simply an optional.
public enum FieldChange: Sendable, Hashable {
    case set(String)
    case clear

    /// The new value (nil: cleared).
    public var value: String? {
        switch self {
        case .set(let text): text
        case .clear: nil
        }
    }
}

extension KeyedDecodingContainer {
    /// Absent: nil; `null`: `.clear`; a string: `.set`.
    public func decodeFieldChange(forKey key: Key) throws -> FieldChange? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) { return .clear }
        return .set(try decode(String.self, forKey: key))
    }
}

extension KeyedEncodingContainer {
    public mutating func encodeFieldChange(_ change: FieldChange?, forKey key: Key) throws {
        switch change {
        case nil: break
        case .clear?: try encodeNil(forKey: key)
        case .set(let text)?: try encode(text, forKey: key)
        }
    }
}
