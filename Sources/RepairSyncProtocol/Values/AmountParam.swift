#if canImport(FoundationEssentials)
    internal import FoundationEssentials
#else
    internal import Foundation
#endif

extension KeyedDecodingContainer {
    /// An amount of money a caller gives: decimal text (`"19.99"`, as the API writes money) or a JSON number, read
    /// from its exact text — never through a binary floating point value. Whether it is an amount is the daemon's
    /// to say (-32002 naming the field); here it is only text.
    public func decodeAmount(forKey key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text }
        if let number = try? decode(Decimal.self, forKey: key) { return "\(number)" }
        throw DecodingError.typeMismatch(
            String.self,
            DecodingError.Context(
                codingPath: codingPath + [key],
                debugDescription: "must be an amount: decimal text (\"19.99\") or a number"))
    }
}
