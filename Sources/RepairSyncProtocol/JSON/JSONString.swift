/// The one JSON string escaper of the project: the control socket's replies and the engine's field texts both write
/// strings through it, so an escaping rule is decided in one place.
///
/// Two styles, because two contracts already exist and their bytes must not move:
/// - `.lineSafe` (the control socket): `"`, `\`, `\n`, `\r`, `\t` by their short escapes, every other control
///   character and U+2028/U+2029 as `\uXXXX`. No raw newline can appear, which the newline-delimited framing needs;
///   U+2028/U+2029 are escaped because some line readers (JavaScript among them) end a line there.
/// - `.foundation`: byte for byte what `JSONSerialization` writes (`/` as `\/`, `\b` and `\f` short), for texts
///   whose bytes were once produced by it and are compared or replayed (an outbox entry's fields are a PATCH body).
///
/// ```swift
/// var text = ""
/// JSONString.write("say \"hi\"\n", to: &text)   // "say \"hi\"\n" with the quotes, on one line
/// ```
public enum JSONString {
    public enum Style: Sendable {
        case lineSafe
        case foundation
    }

    /// Appends `value` as a quoted JSON string.
    public static func write(_ value: String, to output: inout String, style: Style = .lineSafe) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "/" where style == .foundation: output += "\\/"
            case "\u{08}" where style == .foundation: output += "\\b"
            case "\u{0C}" where style == .foundation: output += "\\f"
            case "\u{2028}" where style == .lineSafe: output += "\\u2028"
            case "\u{2029}" where style == .lineSafe: output += "\\u2029"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    /// `value` as a quoted JSON string.
    public static func quoted(_ value: String, style: Style = .lineSafe) -> String {
        var output = ""
        write(value, to: &output, style: style)
        return output
    }
}
