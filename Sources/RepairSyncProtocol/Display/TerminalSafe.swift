/// Text from the daemon, the server or a customer made safe to show on a terminal.
///
/// A terminal obeys the control characters in what it is given: an order note holding `ESC ] 52 ; c ; … BEL` writes
/// to the clipboard of whoever runs `repairctl order show`, `ESC [ 2 J` clears their screen, a lone carriage return
/// lets the rest of a line overwrite what came before it, and a right-to-left override makes text read backwards.
/// Every such character is therefore shown instead of obeyed, as Swift spells it: `\u{` + its code point in upper-case
/// hexadecimal (at least two digits) + `}` — escape `\u{1B}`, NUL `\u{00}`, DEL `\u{7F}`, the one-character CSI
/// `\u{9B}`, RIGHT-TO-LEFT OVERRIDE `\u{202E}`. Escaped are: every C0 control but line feed and tab (U+0000–U+001F),
/// DEL (U+007F), every C1 control (U+0080–U+009F), and the bidirectional embeddings, overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069). Everything else — accents, other scripts, emoji, a literal backslash — is left
/// as it is, so ordinary text reads the same.
///
/// The work is done on Unicode scalars, not `Character`s: a grapheme cluster hides a carriage return inside
/// "\r\n" and a control character under a combining mark.
///
/// ```swift
/// TerminalSafe.text("a\u{1B}[2Jb\r\nc")   // "a\\u{1B}[2Jb\nc": the escape shown, CRLF a line break
/// TerminalSafe.line("one\r\ntwo\tthree")  // "one two three": a table cell stays on its line
/// ```
public enum TerminalSafe {
    /// `text` for output that may span lines: line feeds and tabs are kept, "\r\n" becomes "\n" (a message typed on
    /// Windows), and a lone "\r" is escaped like every other control character.
    public static func text(_ text: String) -> String {
        escaped(text, oneLine: false)
    }

    /// `text` on one line (a table cell, a headline): every line break — "\n", "\r\n", a lone "\r", U+2028 LINE
    /// SEPARATOR, U+2029 PARAGRAPH SEPARATOR — and every tab becomes one space; the rest is escaped as in `text(_:)`.
    public static func line(_ text: String) -> String {
        escaped(text, oneLine: true)
    }

    private static func escaped(_ text: String, oneLine: Bool) -> String {
        let scalars = text.unicodeScalars
        // Nearly every text is ordinary: return it without copying.
        guard scalars.contains(where: { isControl($0) || (oneLine && isSpaced($0)) }) else { return text }
        var output = String.UnicodeScalarView()
        var index = scalars.startIndex
        while index != scalars.endIndex {
            let scalar = scalars[index]
            scalars.formIndex(after: &index)
            if scalar == "\r", index != scalars.endIndex, scalars[index] == "\n" {
                continue  // "\r\n" is one line break: the "\n" that follows stands for both.
            }
            if oneLine && isSpaced(scalar) {
                output.append(" ")
            } else if isControl(scalar) {
                output.append(contentsOf: escape(scalar).unicodeScalars)
            } else {
                output.append(scalar)
            }
        }
        return String(output)
    }

    /// Obeyed by a terminal, so shown escaped (line feed and tab are the two a text may carry).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Kept in a text, but a space on one line.
    private static func isSpaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\n", "\t", "\r", "\u{2028}", "\u{2029}": true
        default: false
        }
    }

    /// `\u{1B}`.
    private static func escape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
    }
}
