public import Foundation
public import RepairSyncProtocol

/// Response bodies as written: the strict parser keeps number literals as their text (so `149.99000000000001` is not
/// silently read back as `149.99`) and every key, so the checks see exactly what the server sent. The daemon's own
/// decoding (`JSONDecoder` and the wire types) is applied beside it, never instead of it.
public enum JSONText {
    static let parser = JSONParser(limits: .init(maxDepth: 64, maxNumberLength: 100))

    public static func parse(_ body: Data) throws(JSONParser.Failure) -> JSONValue {
        try parser.parse(body)
    }

    /// True when `a` and `b` are the same JSON: objects compared without regard to key order, numbers by value.
    public static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let left), .object(let right)):
            guard left.count == right.count else { return false }
            let rightByKey = Dictionary(right.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            return left.allSatisfy { member in rightByKey[member.key].map { same(member.value, $0) } ?? false }
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
        case (.number(let left), .number(let right)):
            return left == right || Decimal(string: left, locale: posix) == Decimal(string: right, locale: posix)
        default:
            return a == b
        }
    }

    private static let posix = Locale(identifier: "en_US_POSIX")
}

extension JSONValue {
    /// The members of an object, in the order written.
    var members: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var elements: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The literal text of a number.
    var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }

    /// A short rendering for reasons: strings quoted, long values cut.
    var brief: String {
        let text = serialized
        return text.count > 60 ? String(text.prefix(57)) + "…" : text
    }
}
