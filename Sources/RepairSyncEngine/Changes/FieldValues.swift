internal import Foundation
internal import RepairSyncProtocol

/// The changeable fields of a record by name, each a text value or nil (cleared). All fields a local change can
/// touch are text (statuses are their raw values), which keeps diffs, merges and the outbox format simple.
public typealias FieldValues = [String: String?]

enum FieldValuesJSON {
    /// `{"notes":"x","diagnosis":null}` with sorted keys, so equal values give equal text.
    ///
    /// Written by hand, byte for byte what `JSONSerialization` with `.sortedKeys` writes (a test holds it to that:
    /// the text is a PATCH body, whose bytes a replay must repeat): every base copy a page applies is encoded here,
    /// and going through `NSDictionary` cost more than the rest of applying the record.
    static func encode(_ values: FieldValues) -> String {
        var text = "{"
        for (index, name) in values.keys.sorted().enumerated() {
            if index > 0 { text += "," }
            appendString(name, to: &text)
            text += ":"
            if case .some(.some(let value)) = values[name] { appendString(value, to: &text) } else { text += "null" }
        }
        return text + "}"
    }

    /// `{"notes":["x",null]}`: per field, the values of changes gone in doubt (`sync_bases.in_doubt`), with sorted
    /// keys — byte for byte what `JSONSerialization` with `.sortedKeys` wrote there before, through the same escaper as
    /// `encode`. The column is only ever parsed (`decodeInDoubt`), so rows written either way read the same.
    static func encodeInDoubt(_ valuesByField: [String: [String?]]) -> String {
        var text = "{"
        for (index, name) in valuesByField.keys.sorted().enumerated() {
            if index > 0 { text += "," }
            appendString(name, to: &text)
            text += ":["
            for (position, value) in (valuesByField[name] ?? []).enumerated() {
                if position > 0 { text += "," }
                if let value { appendString(value, to: &text) } else { text += "null" }
            }
            text += "]"
        }
        return text + "}"
    }

    /// The project's one JSON string escaper, in the style `JSONSerialization` writes.
    private static func appendString(_ value: String, to text: inout String) {
        JSONString.write(value, to: &text, style: .foundation)
    }

    /// The reference encoding (`JSONSerialization`, sorted keys), for the test that holds `encode` to it.
    static func encodeWithFoundation(_ values: FieldValues) -> String {
        let object = values.mapValues { $0.map { $0 as Any } ?? NSNull() }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The fields of `encode`'s text, read with the project's own parser: every queued change reads its record's
    /// base copy and entries through here, and Foundation's parser (through `NSDictionary`) cost a sixth of queueing.
    static func decode(_ text: String) throws -> FieldValues {
        guard case .object(let members)? = try? parser.parse(text.utf8) else {
            throw EngineError.corruptOutbox("fields are not a JSON object: \(text.prefix(200))")
        }
        var values: FieldValues = [:]
        for (name, value) in members {
            switch value {
            case .null: values[name] = .some(nil)
            case .string(let text): values[name] = .some(text)
            default: throw EngineError.corruptOutbox("field \(name) is not text or null")
            }
        }
        return values
    }

    private static let parser = JSONParser()
}

extension Dictionary where Key == String, Value == String? {
    /// These values with `other`'s on top.
    func overlaid(with other: FieldValues) -> FieldValues { merging(other) { _, new in new } }

    /// The value of a field that is present (nil when absent; `.some(nil)` when cleared).
    func value(_ name: String) -> String?? { self[name] }
}
