import Foundation
import RepairSyncControl

#if canImport(Glibc)
    import Glibc
#endif

/// Terminal output: colour only on a terminal and never with NO_COLOR; errors on stderr.
enum Output {
    static let isTerminal = isatty(STDOUT_FILENO) == 1
    static let colour = isTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    static func error(_ sentence: String) {
        FileHandle.standardError.write(Data("repairctl: \(sentence)\n".utf8))
    }

    static func paint(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    static func red(_ text: String) -> String { paint(text, "31") }
    static func green(_ text: String) -> String { paint(text, "32") }
    static func yellow(_ text: String) -> String { paint(text, "33") }
    static func bold(_ text: String) -> String { paint(text, "1") }

    /// Aligned columns with a header; cells are cut at `width` characters.
    static func table(_ header: [String], _ rows: [[String]], width: Int = 48) {
        let cut = rows.map { $0.map { $0.count > width ? String($0.prefix(width - 1)) + "…" : $0 } }
        var widths = header.map(\.count)
        for row in cut { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(bold(line(header)))
        for row in cut { print(line(row)) }
        if rows.isEmpty { print("(none)") }
    }

    /// "3 min ago" for an RFC 3339 time, "never" for null.
    static func relative(_ value: JSONValue?) -> String {
        guard let text = value?.stringValue else { return "never" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) else { return text }
        let seconds = Int(Date().timeIntervalSince(date))
        switch seconds {
        case ..<5: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86400: return "\(seconds / 3600) h ago"
        default: return "\(seconds / 86400) d ago"
        }
    }

    /// A JSON value as a table cell.
    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: return ""
        case .string(let text)?: return text.replacingOccurrences(of: "\n", with: " ")
        case .number(let text)?: return text
        case .bool(let flag)?: return flag ? "yes" : "no"
        case let other?: return other.serialized
        }
    }
}
