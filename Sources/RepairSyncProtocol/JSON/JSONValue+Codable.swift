#if canImport(FoundationEssentials)
    internal import FoundationEssentials
#else
    internal import Foundation
#endif

/// A `JSONValue` inside a `Codable` type is written and read as the JSON it is. `JSONValueEncoder` and
/// `JSONValueDecoder` take it as it is (a number keeps its literal text); other coders go through its parts.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if let reader = decoder as? JSONValueDecoder.Reader {
            self = reader.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let number = try? container.decode(Decimal.self) {
            self = .number(number.description)
        } else if let values = try? container.decode([JSONValue].self) {
            self = .array(values)
        } else {
            let object = try container.decode([String: JSONValue].self)
            self = .object(object.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if let writer = encoder as? JSONValueEncoder.Writer {
            writer.set(self)
            return
        }
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .number(let text):
            var container = encoder.singleValueContainer()
            try container.encode(Decimal(string: text) ?? 0)
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .object(let members):
            var container = encoder.container(keyedBy: AnyKey.self)
            for member in members { try container.encode(member.value, forKey: AnyKey(member.key)) }
        }
    }
}

/// A coding key for any name (objects whose keys are data, not fields).
public struct AnyKey: CodingKey, Hashable, Sendable {
    public var stringValue: String
    public var intValue: Int?

    public init(_ name: String) {
        stringValue = name
        intValue = nil
    }

    public init?(stringValue: String) { self.init(stringValue) }

    public init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}
