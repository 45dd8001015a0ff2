#if canImport(FoundationEssentials)
    internal import FoundationEssentials
#else
    internal import Foundation
#endif

/// Encodes a `Codable` value straight into a `JSONValue`, with no text in between.
///
/// Deterministic, which golden tests and the wire need: an object's keys come in the order the type encodes them
/// (declaration order for synthesized conformances), a `[String: …]` dictionary's keys sorted. A `Decimal` is
/// written as its exact decimal text, a `JSONValue` as it is. A `nil` given to `encodeIfPresent` (what synthesized
/// conformances do for optionals) leaves the key out; a type that wants an explicit `null` encodes the optional
/// with `encode`.
///
/// ```swift
/// let json = try JSONValueEncoder().encode(RPC.Version.Result(version: "0.1.0", protocol: 2))
/// json.serialized  // {"version":"0.1.0","protocol":2}
/// ```
public struct JSONValueEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let box = Box()
        try Self.write(value, into: box, path: [])
        return try box.json(path: [])
    }

    /// One value being built: a scalar, an object (keys in order) or an array.
    final class Box {
        var scalar: JSONValue?
        var keys: [String]?
        var children: [String: Box]?
        var elements: [Box]?

        func makeObject() {
            guard keys == nil else { return }
            scalar = nil
            elements = nil
            keys = []
            children = [:]
        }

        func makeArray() {
            guard elements == nil else { return }
            scalar = nil
            keys = nil
            children = nil
            elements = []
        }

        func child(_ key: String) -> Box {
            makeObject()
            if let existing = children?[key] { return existing }
            let box = Box()
            keys?.append(key)
            children?[key] = box
            return box
        }

        func appendElement() -> Box {
            makeArray()
            let box = Box()
            elements?.append(box)
            return box
        }

        func json(path: [any CodingKey]) throws -> JSONValue {
            if let scalar { return scalar }
            if let keys, let children {
                return .object(
                    try keys.map { key in (key: key, value: try children[key]!.json(path: path + [AnyKey(key)])) })
            }
            if let elements {
                return .array(try elements.enumerated().map { try $1.json(path: path + [AnyKey(intValue: $0)!]) })
            }
            throw EncodingError.invalidValue(
                (), EncodingError.Context(codingPath: path, debugDescription: "nothing was encoded for this value"))
        }
    }

    static func write<T: Encodable>(_ value: T, into box: Box, path: [any CodingKey]) throws {
        switch value {
        case let json as JSONValue:
            box.scalar = json
        case let decimal as Decimal:
            guard !decimal.isNaN else {
                throw EncodingError.invalidValue(decimal, .init(codingPath: path, debugDescription: "NaN is not JSON"))
            }
            box.scalar = .number(decimal.description)
        case let dictionary as any SortedEncodableDictionary:
            box.makeObject()
            for (key, element) in dictionary.sortedEntries() {
                try write(element, into: box.child(key), path: path + [AnyKey(key)])
            }
        default:
            try value.encode(to: Writer(box: box, codingPath: path))
        }
    }

    static func number<N: BinaryFloatingPoint & LosslessStringConvertible>(_ value: N, path: [any CodingKey]) throws
        -> JSONValue
    {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "\(value) is not JSON"))
        }
        return .number(value.description)
    }

    /// The `Encoder` over one box.
    final class Writer: Encoder {
        let box: Box
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(box: Box, codingPath: [any CodingKey]) {
            self.box = box
            self.codingPath = codingPath
        }

        /// Sets the value as it is (a `JSONValue` encoding itself).
        func set(_ value: JSONValue) { box.scalar = value }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            box.makeObject()
            return KeyedEncodingContainer(KeyedWriter<Key>(box: box, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            box.makeArray()
            return UnkeyedWriter(box: box, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            SingleWriter(box: box, codingPath: codingPath)
        }
    }

    struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: Box
        let codingPath: [any CodingKey]

        func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

        mutating func encodeNil(forKey key: Key) throws { box.child(key.stringValue).scalar = .null }
        mutating func encode(_ value: Bool, forKey key: Key) throws { box.child(key.stringValue).scalar = .bool(value) }
        mutating func encode(_ value: String, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .string(value)
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            box.child(key.stringValue).scalar = try JSONValueEncoder.number(value, path: path(key))
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            box.child(key.stringValue).scalar = try JSONValueEncoder.number(value, path: path(key))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            box.child(key.stringValue).scalar = .number(String(value))
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try JSONValueEncoder.write(value, into: box.child(key.stringValue), path: path(key))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            let child = box.child(key.stringValue)
            child.makeObject()
            return KeyedEncodingContainer(KeyedWriter<NestedKey>(box: child, codingPath: path(key)))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = box.child(key.stringValue)
            child.makeArray()
            return UnkeyedWriter(box: child, codingPath: path(key))
        }

        mutating func superEncoder() -> any Encoder {
            Writer(box: box.child("super"), codingPath: codingPath + [AnyKey("super")])
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            Writer(box: box.child(key.stringValue), codingPath: path(key))
        }
    }

    struct UnkeyedWriter: UnkeyedEncodingContainer {
        let box: Box
        let codingPath: [any CodingKey]
        var count: Int { box.elements?.count ?? 0 }

        func next() -> (Box, [any CodingKey]) {
            let index = count
            return (box.appendElement(), codingPath + [AnyKey(intValue: index)!])
        }

        mutating func encodeNil() throws { next().0.scalar = .null }
        mutating func encode(_ value: Bool) throws { next().0.scalar = .bool(value) }
        mutating func encode(_ value: String) throws { next().0.scalar = .string(value) }
        mutating func encode(_ value: Double) throws {
            let (element, path) = next()
            element.scalar = try JSONValueEncoder.number(value, path: path)
        }
        mutating func encode(_ value: Float) throws {
            let (element, path) = next()
            element.scalar = try JSONValueEncoder.number(value, path: path)
        }
        mutating func encode(_ value: Int) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: Int8) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: Int16) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: Int32) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: Int64) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt8) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt16) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt32) throws { next().0.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt64) throws { next().0.scalar = .number(String(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            let (element, path) = next()
            try JSONValueEncoder.write(value, into: element, path: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let (element, path) = next()
            element.makeObject()
            return KeyedEncodingContainer(KeyedWriter<NestedKey>(box: element, codingPath: path))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let (element, path) = next()
            element.makeArray()
            return UnkeyedWriter(box: element, codingPath: path)
        }

        mutating func superEncoder() -> any Encoder {
            let (element, path) = next()
            return Writer(box: element, codingPath: path)
        }
    }

    struct SingleWriter: SingleValueEncodingContainer {
        let box: Box
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws { box.scalar = .null }
        mutating func encode(_ value: Bool) throws { box.scalar = .bool(value) }
        mutating func encode(_ value: String) throws { box.scalar = .string(value) }
        mutating func encode(_ value: Double) throws {
            box.scalar = try JSONValueEncoder.number(value, path: codingPath)
        }
        mutating func encode(_ value: Float) throws {
            box.scalar = try JSONValueEncoder.number(value, path: codingPath)
        }
        mutating func encode(_ value: Int) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: Int8) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: Int16) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: Int32) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: Int64) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt8) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt16) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt32) throws { box.scalar = .number(String(value)) }
        mutating func encode(_ value: UInt64) throws { box.scalar = .number(String(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            try JSONValueEncoder.write(value, into: box, path: codingPath)
        }
    }
}

/// A `[String: Encodable]` dictionary, written with its keys sorted so that equal values give equal text.
protocol SortedEncodableDictionary {
    func sortedEntries() -> [(String, any Encodable)]
}

extension Dictionary: SortedEncodableDictionary where Key == String, Value: Encodable {
    func sortedEntries() -> [(String, any Encodable)] {
        sorted { $0.key < $1.key }.map { ($0.key, $0.value as any Encodable) }
    }
}
