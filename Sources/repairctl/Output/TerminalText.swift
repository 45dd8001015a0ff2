import RepairSyncProtocol

/// What repairctl writes for a person: its own words and colours as written, every value made safe.
///
/// `Output.line` and `Output.status` take nothing else, so no command can print a value raw. A string literal of
/// repairctl's source is written as it is (the progress bar's `"\r\u{1B}[K"`); a value interpolated into one — a
/// note, a ticket subject, the daemon's status message, an error the server sent — goes through
/// `TerminalSafe.text` (its control characters shown as `\u{1B}`, never obeyed), and a `String` held in a variable is
/// made safe the same way by `TerminalText(_:)`. Colour comes only from `Output.paint`, around text already safe.
///
/// ```swift
/// Output.line("notes:    \(note)")          // an ESC in `note` is printed as \u{1B}
/// Output.line(Output.bold("Ticket #\(n)") + " (\(status))")
/// ```
struct TerminalText: Equatable, Sendable, ExpressibleByStringInterpolation {
    /// The characters written to the terminal.
    let rendered: String

    /// `text` from anywhere, made safe (`TerminalSafe.text`).
    init(_ text: String) {
        rendered = TerminalSafe.text(text)
    }

    /// A literal of repairctl's own source, as written.
    init(stringLiteral literal: String) {
        rendered = literal
    }

    init(stringInterpolation: StringInterpolation) {
        rendered = stringInterpolation.rendered
    }

    /// `codes` (ANSI SGR parameters) around `text`; only `Output.paint` calls it, and only on a colour terminal.
    init(painting text: TerminalText, _ codes: String) {
        rendered = "\u{1B}[\(codes)m\(text.rendered)\u{1B}[0m"
    }

    static func + (lhs: TerminalText, rhs: TerminalText) -> TerminalText {
        TerminalText(joining: lhs.rendered + rhs.rendered)
    }

    static func += (lhs: inout TerminalText, rhs: TerminalText) {
        lhs = lhs + rhs
    }

    /// Text already safe: two halves that were.
    private init(joining rendered: String) {
        self.rendered = rendered
    }

    /// Literal segments as written; interpolated values made safe, except text that already is.
    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var rendered = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            rendered.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            rendered += literal
        }

        mutating func appendInterpolation(_ text: TerminalText) {
            rendered += text.rendered
        }

        mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            rendered += TerminalSafe.text(value.description)
        }
    }
}
