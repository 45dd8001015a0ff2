public import Foundation

extension JSONValue {
    /// A value encoded with `JSONEncoder` (so records keep the shapes their `Codable` conformances give them, money
    /// as exact decimal strings), as a JSON value for a reply.
    public static func encoding(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws -> JSONValue {
        let data = try encoder.encode(value)
        // Our own output: trusted, so the limits only guard against a pathological model.
        return try JSONParser(limits: .init(maxDepth: 1000, maxNumberLength: 10_000)).parse(data)
    }

    /// Decodes this value as `T` (for a client reading a result).
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: Data(serialized.utf8))
    }

    public static func optionalString(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
}
