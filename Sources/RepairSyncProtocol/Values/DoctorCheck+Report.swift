extension DoctorCheck {
    /// A doctor report as people read it: one line per check (`ok`, `warn`, `fail`, `skipped`), and under each
    /// warning or failure its fix. `paint` colours a level's label (or leaves it, without a terminal).
    public static func report(_ checks: [DoctorCheck], paint: (Level, String) -> String = { $1 }) -> [String] {
        let width = checks.map(\.name.count).max() ?? 0
        var lines: [String] = []
        for check in checks {
            let label = check.level.rawValue + String(repeating: " ", count: max(0, 7 - check.level.rawValue.count))
            let name = check.name + String(repeating: " ", count: width - check.name.count)
            lines.append("\(paint(check.level, label)) \(name)  \(check.detail)")
            if let fix = check.fix, check.level == .warn || check.level == .fail {
                lines.append("        \(String(repeating: " ", count: width))  → \(fix)")
            }
        }
        return lines
    }
}
