import RepairSyncProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Terminal output: colour only on a terminal and never with `NO_COLOR` set (https://no-color.org); errors on
/// standard error; lines written at once (a status bar reading a pipe sees each as it comes). What a person reads
/// is `TerminalText`, so a value from the daemon, the server or a customer is shown, never obeyed, by the terminal
/// (`TerminalSafe`); only `--json` documents are written as they are, by `json(_:)`.
enum Output {
    static let isTerminal = isatty(STDOUT_FILENO) == 1
    static let colour = isTerminal && (getenv("NO_COLOR").map { String(cString: $0).isEmpty } ?? true)

    /// One line on standard output, written now (not buffered).
    static func line(_ text: TerminalText) {
        write(STDOUT_FILENO, text.rendered + "\n")
    }

    /// A `--json` document on one line, byte for byte as serialized: it is for a parser, which must get every text
    /// exact (the serializer escapes the C0 controls; C1 controls and bidi overrides are plain JSON text).
    static func json(_ document: String) {
        write(STDOUT_FILENO, document + "\n")
    }

    /// A sentence on standard error; it often quotes the daemon or the server, so it is made safe like any value.
    static func error(_ sentence: String) {
        write(STDERR_FILENO, "repairctl: \(TerminalSafe.text(sentence))\n")
    }

    /// Text on standard error without a newline (a progress bar).
    static func status(_ text: TerminalText) {
        write(STDERR_FILENO, text.rendered)
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                Glibc.write(descriptor, $0.baseAddress! + sent, $0.count - sent)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            sent += count
        }
    }

    static func paint(_ text: TerminalText, _ code: String) -> TerminalText {
        colour ? TerminalText(painting: text, code) : text
    }
    static func red(_ text: TerminalText) -> TerminalText { paint(text, "31") }
    static func green(_ text: TerminalText) -> TerminalText { paint(text, "32") }
    static func yellow(_ text: TerminalText) -> TerminalText { paint(text, "33") }
    static func bold(_ text: TerminalText) -> TerminalText { paint(text, "1") }

    /// `text` padded with spaces to `width` characters.
    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// Aligned columns under a header; each cell on one line (`cell`), cut at `width` characters; "(none)" for no
    /// rows.
    static func table(_ header: [String], _ rows: [[String]], width: Int = 48) {
        let cut = rows.map { $0.map(cell).map { $0.count > width ? String($0.prefix(width - 1)) + "…" : $0 } }
        var widths = header.map(\.count)
        for row in cut {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func format(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in index == cells.count - 1 ? cell : pad(cell, widths[index]) }
                .joined(separator: "  ")
        }
        line(bold(TerminalText(format(header))))
        for row in cut { line(TerminalText(format(row))) }
        if rows.isEmpty { line("(none)") }
    }

    /// "3 min ago" for a time, "never" for none.
    static func relative(_ time: Timestamp?, now: Timestamp = .now()) -> String {
        guard let time else { return "never" }
        let seconds = (now.millisecondsSince1970 - time.millisecondsSince1970) / 1000
        switch seconds {
        case ..<5: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86400: return "\(seconds / 3600) h ago"
        default: return "\(seconds / 86400) d ago"
        }
    }

    /// "in 14 min", "now".
    static func until(_ time: Timestamp, now: Timestamp = .now()) -> String {
        let seconds = Int(((time.millisecondsSince1970 - now.millisecondsSince1970) + 500) / 1000)
        switch seconds {
        case ..<1: return "now"
        case ..<60: return "in \(seconds) s"
        case ..<3600: return "in \(seconds / 60) min"
        default: return "in \(seconds / 3600) h \(seconds % 3600 / 60) min"
        }
    }

    /// A text cell: one line, safe for a terminal (`TerminalSafe.line`: each line break or tab a space, control
    /// characters shown as `\u{1B}`), "" for none.
    static func cell(_ text: String?) -> String {
        TerminalSafe.line(text ?? "")
    }

    /// Money as people read it ("150.00"), "" for none.
    static func money(_ amount: Money?) -> String { amount?.displayText ?? "" }

    /// `1.5 MiB`, one decimal.
    static func mebibytes(_ bytes: Int64) -> String {
        let tenths = (bytes * 10 + 524_288) / 1_048_576
        return "\(tenths / 10).\(tenths % 10) MiB"
    }

    /// A field value of a change ("" for a cleared one).
    static func field(_ value: String??) -> String {
        switch value {
        case .some(.some(let text)): cell(text)
        case .some(.none): "(cleared)"
        case .none: ""
        }
    }
}
