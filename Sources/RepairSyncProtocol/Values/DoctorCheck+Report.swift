extension DoctorCheck {
    /// One line of a report in its two parts, for a writer that must treat them apart: a terminal colours the label
    /// it wrote itself and shows the rest — a check's detail and fix, often the server's words — without obeying it.
    public struct ReportLine: Sendable, Equatable {
        /// The check's level, on a check's line; nil on the fix under it.
        public var level: Level?
        /// The level padded to its column ("ok     "), or the fix's indentation.
        public var label: String
        /// The rest of the line, from the space after the label.
        public var text: String
    }

    /// A doctor report as people read it: one line per check (`ok`, `warn`, `fail`, `skipped`), and under each
    /// warning or failure its fix — each line as its label and the rest.
    public static func reportLines(_ checks: [DoctorCheck]) -> [ReportLine] {
        let width = checks.map(\.name.count).max() ?? 0
        var lines: [ReportLine] = []
        for check in checks {
            let label = check.level.rawValue + String(repeating: " ", count: max(0, 7 - check.level.rawValue.count))
            let name = check.name + String(repeating: " ", count: width - check.name.count)
            lines.append(ReportLine(level: check.level, label: label, text: " \(name)  \(check.detail)"))
            if let fix = check.fix, check.level == .warn || check.level == .fail {
                lines.append(
                    ReportLine(level: nil, label: "        \(String(repeating: " ", count: width))", text: "  → \(fix)")
                )
            }
        }
        return lines
    }
}
