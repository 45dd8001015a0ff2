internal import Foundation

/// The soak's table: one row per figure, grouped by scenario, as plain text for a terminal and as Markdown for
/// docs/reliability.md.
public enum ReportTable {
    public static func text(_ reports: [ScenarioReport]) -> String {
        var rows: [[String]] = [["scenario", "figure", "value", "target", "ok"]]
        for report in reports {
            for (index, figure) in report.figures.enumerated() {
                rows.append([
                    index == 0 ? "\(report.scenario) (\(Int(report.seconds.rounded())) s)" : "", figure.name,
                    figure.value,
                    figure.target ?? "", figure.passed.map { $0 ? "ok" : "FAIL" } ?? "",
                ])
            }
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.enumerated().map { index, row in
            let line = row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
            return index == 0
                ? line + "\n" + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") : line
        }.joined(separator: "\n")
    }

    public static func markdown(_ reports: [ScenarioReport]) -> String {
        var lines = ["| scenario | figure | value | target | ok |", "| --- | --- | --- | --- | --- |"]
        for report in reports {
            for (index, figure) in report.figures.enumerated() {
                let cells = [
                    index == 0 ? "**\(report.scenario)** (\(Int(report.seconds.rounded())) s)" : "", figure.name,
                    figure.value, figure.target ?? "", figure.passed.map { $0 ? "ok" : "**FAIL**" } ?? "",
                ]
                lines.append(
                    "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
            }
        }
        return lines.joined(separator: "\n")
    }
}
