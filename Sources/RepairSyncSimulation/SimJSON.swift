internal import Foundation

/// The simulated server's own JSON: records are kept as objects and written with sorted keys, so that the same
/// state always gives the same bytes (a seed replays exactly) and the server shares no storage with the engine.
enum SimJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([SimJSON])
    case object([String: SimJSON])

    subscript(key: String) -> SimJSON? {
        get { if case .object(let members) = self { members[key] } else { nil } }
        set {
            guard case .object(var members) = self else { return }
            members[key] = newValue
            self = .object(members)
        }
    }

    var string: String? { if case .string(let text) = self { text } else { nil } }
    var int: Int? { if case .int(let value) = self { value } else { nil } }

    /// Text with sorted keys.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    var data: Data { Data(text.utf8) }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .string(let value): Self.quote(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
