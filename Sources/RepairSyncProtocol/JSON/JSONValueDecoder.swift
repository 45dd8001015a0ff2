#if canImport(FoundationEssentials)
    internal import FoundationEssentials
#else
    internal import Foundation
#endif

/// Decodes a `Decodable` value straight from a `JSONValue` (as the parser produced it: numbers keep their text).
///
/// Its errors say what a person would: `must be a string, not a number`, `is required`, `must be one of a, b, not
/// c` — `ParamsDecoding` turns them into `-32602` replies naming the parameter. Integers must be written as
/// integers; a `Decimal` is read from the number's exact text.
///
/// ```swift
/// let version = try JSONValueDecoder().decode(RPC.Version.Result.self, from: reply)
/// ```
public struct JSONValueDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try Self.read(type, from: value, path: [])
    }

    static func read<T: Decodable>(_ type: T.Type, from value: JSONValue, path: [any CodingKey]) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        if T.self == Decimal.self {
            guard case .number(let text) = value, let decimal = Decimal(string: text) else {
                throw mismatch(T.self, "a number", value, path)
            }
            return decimal as! T
        }
        do {
            return try T(from: Reader(value: value, codingPath: path))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.count == path.count {
            // A string enum refused the value: say which values it takes.
            if let listed = T.self as? any (CaseIterable & RawRepresentable<String>).Type {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: path,
                        debugDescription:
                            "must be one of \(knownValues(listed).joined(separator: ", ")), not \(value.serialized)"))
            }
            throw DecodingError.dataCorrupted(context)
        }
    }

    static func knownValues<E: CaseIterable & RawRepresentable<String>>(_ type: E.Type) -> [String] {
        E.allCases.map(\.rawValue)
    }

    static func mismatch(_ type: Any.Type, _ expected: String, _ value: JSONValue, _ path: [any CodingKey])
        -> DecodingError
    {
        if value == .null {
            return .valueNotFound(
                type, .init(codingPath: path, debugDescription: "is required (null is not a value here)"))
        }
        return .typeMismatch(
            type, .init(codingPath: path, debugDescription: "must be \(expected), not \(value.typeArticle)"))
    }

    static func integer<N: FixedWidthInteger>(_ type: N.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> N {
        guard case .number(let text) = value else { throw mismatch(N.self, "an integer", value, path) }
        if let number = N(text) { return number }
        // 1.0 and 1e3 are integers written otherwise; 1.5 is not.
        if let real = Double(text), real.rounded() == real, let number = N(exactly: real) { return number }
        if Double(text).map({ $0.rounded() == $0 }) == true {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(text) is out of range"))
        }
        throw DecodingError.typeMismatch(
            N.self, .init(codingPath: path, debugDescription: "must be an integer, not \(text)"))
    }

    static func real(_ value: JSONValue, _ path: [any CodingKey]) throws -> Double {
        guard case .number(let text) = value, let number = Double(text) else {
            throw mismatch(Double.self, "a number", value, path)
        }
        return number
    }

    static func string(_ value: JSONValue, _ path: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, "a string", value, path) }
        return text
    }

    static func bool(_ value: JSONValue, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, "a boolean", value, path) }
        return flag
    }

    /// The `Decoder` over one value.
    final class Reader: Decoder {
        let value: JSONValue
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(value: JSONValue, codingPath: [any CodingKey]) {
            self.value = value
            self.codingPath = codingPath
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard case .object(let members) = value else {
                throw JSONValueDecoder.mismatch([String: JSONValue].self, "an object", value, codingPath)
            }
            return KeyedDecodingContainer(KeyedReader<Key>(members: members, codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard case .array(let values) = value else {
                throw JSONValueDecoder.mismatch([JSONValue].self, "an array", value, codingPath)
            }
            return UnkeyedReader(values: values, codingPath: codingPath)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            SingleReader(value: value, codingPath: codingPath)
        }
    }

    struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [(key: String, value: JSONValue)]
        let codingPath: [any CodingKey]
        let lookup: [String: JSONValue]

        init(members: [(key: String, value: JSONValue)], codingPath: [any CodingKey]) {
            self.members = members
            self.codingPath = codingPath
            lookup = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        }

        var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

        func contains(_ key: Key) -> Bool { lookup[key.stringValue] != nil }

        func value(_ key: Key) throws -> JSONValue {
            guard let value = lookup[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "is required"))
            }
            return value
        }

        func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try JSONValueDecoder.bool(value(key), path(key))
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try JSONValueDecoder.string(value(key), path(key))
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try JSONValueDecoder.real(value(key), path(key))
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            Float(try JSONValueDecoder.real(value(key), path(key)))
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
            try JSONValueDecoder.integer(type, value(key), path(key))
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try JSONValueDecoder.read(type, from: value(key), path: path(key))
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try Reader(value: value(key), codingPath: path(key)).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try Reader(value: value(key), codingPath: path(key)).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            Reader(value: lookup["super"] ?? .null, codingPath: codingPath + [AnyKey("super")])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            Reader(value: lookup[key.stringValue] ?? .null, codingPath: path(key))
        }
    }

    struct UnkeyedReader: UnkeyedDecodingContainer {
        let values: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0

        init(values: [JSONValue], codingPath: [any CodingKey]) {
            self.values = values
            self.codingPath = codingPath
        }

        var count: Int? { values.count }
        var isAtEnd: Bool { currentIndex >= values.count }

        mutating func next() throws -> (JSONValue, [any CodingKey]) {
            let path = codingPath + [AnyKey(intValue: currentIndex)!]
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    JSONValue.self, .init(codingPath: path, debugDescription: "has fewer elements than expected"))
            }
            defer { currentIndex += 1 }
            return (values[currentIndex], path)
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, values[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode(_ type: Bool.Type) throws -> Bool {
            let (v, p) = try next()
            return try JSONValueDecoder.bool(v, p)
        }
        mutating func decode(_ type: String.Type) throws -> String {
            let (v, p) = try next()
            return try JSONValueDecoder.string(v, p)
        }
        mutating func decode(_ type: Double.Type) throws -> Double {
            let (v, p) = try next()
            return try JSONValueDecoder.real(v, p)
        }
        mutating func decode(_ type: Float.Type) throws -> Float {
            let (v, p) = try next()
            return Float(try JSONValueDecoder.real(v, p))
        }
        mutating func decode(_ type: Int.Type) throws -> Int {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: Int8.Type) throws -> Int8 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: Int16.Type) throws -> Int16 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: Int32.Type) throws -> Int32 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: Int64.Type) throws -> Int64 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: UInt.Type) throws -> UInt {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
            let (v, p) = try next()
            return try JSONValueDecoder.integer(type, v, p)
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, path) = try next()
            return try JSONValueDecoder.read(type, from: value, path: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let (value, path) = try next()
            return try Reader(value: value, codingPath: path).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next()
            return try Reader(value: value, codingPath: path).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next()
            return Reader(value: value, codingPath: path)
        }
    }

    struct SingleReader: SingleValueDecodingContainer {
        let value: JSONValue
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try JSONValueDecoder.bool(value, codingPath) }
        func decode(_ type: String.Type) throws -> String { try JSONValueDecoder.string(value, codingPath) }
        func decode(_ type: Double.Type) throws -> Double { try JSONValueDecoder.real(value, codingPath) }
        func decode(_ type: Float.Type) throws -> Float { Float(try JSONValueDecoder.real(value, codingPath)) }
        func decode(_ type: Int.Type) throws -> Int { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONValueDecoder.read(type, from: value, path: codingPath)
        }
    }
}

extension JSONValue {
    /// "a string", "an object": for error messages.
    public var typeArticle: String {
        switch self {
        case .array, .object: "an \(typeName)"
        default: "a \(typeName)"
        }
    }
}
