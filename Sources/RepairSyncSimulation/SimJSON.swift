internal import Foundation
internal import RepairSyncProtocol

/// The simulated server's own JSON: records are kept as objects and written with sorted keys, so that the same
/// state always gives the same bytes (a seed replays exactly) and the server shares no storage with the engine.
/// Strings go through the project's one escaper (`JSONString`, the control socket's `.lineSafe` style: the bytes the
/// simulator wrote with its own escaper before, for every string it makes — it makes no U+2028 or U+2029).
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
        case .string(let value): JSONString.write(value, to: &out)
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
                JSONString.write(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }
}
