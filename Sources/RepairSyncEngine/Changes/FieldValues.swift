internal import Foundation

/// The changeable fields of a record by name, each a text value or nil (cleared). All fields a local change can
/// touch are text (statuses are their raw values), which keeps diffs, merges and the outbox format simple.
public typealias FieldValues = [String: String?]

enum FieldValuesJSON {
    /// `{"notes":"x","diagnosis":null}` with sorted keys, so equal values give equal text.
    static func encode(_ values: FieldValues) -> String {
        let object = values.mapValues { $0.map { $0 as Any } ?? NSNull() }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String) throws -> FieldValues {
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw EngineError.corruptOutbox("fields are not a JSON object: \(text.prefix(200))")
        }
        var values: FieldValues = [:]
        for (name, value) in object {
            switch value {
            case is NSNull: values[name] = .some(nil)
            case let text as String: values[name] = .some(text)
            default: throw EngineError.corruptOutbox("field \(name) is not text or null")
            }
        }
        return values
    }
}

extension Dictionary where Key == String, Value == String? {
    /// These values with `other`'s on top.
    func overlaid(with other: FieldValues) -> FieldValues { merging(other) { _, new in new } }

    /// The value of a field that is present (nil when absent; `.some(nil)` when cleared).
    func value(_ name: String) -> String?? { self[name] }
}
