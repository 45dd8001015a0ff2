/// A JSON value as the control socket reads and writes it. Numbers keep their literal text, so that an id such as
/// `12345678901234567890` or a decimal amount round-trips exactly; objects keep their key order.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's literal text, validated by the parser (e.g. `-12.5e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Keys in the order written; the parser refuses duplicate keys.
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let text): hasher.combine(text)
        case .string(let text): hasher.combine(text)
        case .array(let values): hasher.combine(values)
        case .object(let members):
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    public static func number(_ value: Int) -> JSONValue { .number(String(value)) }
    public static func object(_ members: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(members.map { (key: $0.key, value: $0.value) })
    }

    /// The member named `key` of an object (nil for other values or a missing key).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// An integer number (no fraction, no exponent) that fits in Int.
    public var intValue: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// The JSON type's name, for error messages ("expected a string, got an array").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue {
    /// The elements of an array (none for other values).
    public var arrayElements: [JSONValue] {
        if case .array(let values) = self { return values }
        return []
    }
}
