import Foundation

/// One row of the results table: what was measured, the baseline of the same run, their ratio, the target.
struct ResultRow: Sendable {
    var scenario: String
    var measured: String
    var baseline: String
    var ratio: String
    var target: String
    /// nil: reported, no target.
    var passed: Bool?

    var verdict: String {
        switch passed {
        case true?: "pass"
        case false?: "FAIL"
        case nil: "—"
        }
    }
}

/// The table for the terminal and the Markdown section for docs/performance.md.
struct BenchReport {
    var results: [ResultRow]
    var machine: Machine
    var commit: String
    var plan: ScenarioPlan
    var wallTime: Duration

    static let header = ["scenario", "measured", "baseline (same run)", "ratio", "target", "result"]

    private var cells: [[String]] {
        results.map { [$0.scenario, $0.measured, $0.baseline, $0.ratio, $0.target, $0.verdict] }
    }

    func table() -> String {
        let rows = [Self.header] + cells
        let widths = Self.header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        func line(_ row: [String]) -> String {
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        return
            ([line(Self.header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
            + cells.map(line)).joined(separator: "\n")
    }

    func markdown() -> String {
        let formatter = ISO8601DateFormatter()
        var text = """
            Measured \(formatter.string(from: Date())) at commit `\(commit)` on \(machine.summary).
            Large shop: \(plan.orders) orders (\(ScenarioPlan.records(orders: plan.orders)) records); small shop: \
            \(plan.smallOrders) orders (\(ScenarioPlan.records(orders: plan.smallOrders)) records). The bench took \
            \(Int(wallTime.seconds)) s.

            | \(Self.header.joined(separator: " | ")) |
            |\(Self.header.map { _ in " --- " }.joined(separator: "|"))|

            """
        for row in cells {
            text += "| " + row.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
        }
        return text
    }

    static let begin = "<!-- bench:begin (written by scripts/bench) -->"
    static let end = "<!-- bench:end -->"
    static let scaleBegin = "<!-- bench-scale:begin (written by scripts/bench --scale N) -->"
    static let scaleEnd = "<!-- bench-scale:end -->"

    /// Replaces what is between the bench markers in `path` (the bench-scale markers for a `--scale` run; creating
    /// the file with just them if needed), so the prose around the table stays.
    func write(into path: String) throws {
        let (begin, end) = plan.scaleFactor == nil ? (Self.begin, Self.end) : (Self.scaleBegin, Self.scaleEnd)
        let section = begin + "\n" + markdown() + end
        var text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "# Performance\n\n\(begin)\n\(end)\n"
        if let start = text.range(of: begin), let stop = text.range(of: end), start.lowerBound < stop.lowerBound {
            text.replaceSubrange(start.lowerBound..<stop.upperBound, with: section)
        } else {
            text += "\n" + section + "\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}

/// The machine the figures come from.
struct Machine {
    var cores: Int
    var cpu: String
    var kernel: String

    static func current() -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        let kernel = ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return Machine(cores: ProcessInfo.processInfo.activeProcessorCount, cpu: model ?? "unknown CPU", kernel: kernel)
    }

    var summary: String { "\(cores) cores (nproc), \(cpu), Linux \(kernel)" }
}

/// Number formatting for the table.
enum Format {
    static func ms(_ value: Double) -> String {
        value >= 100
            ? String(format: "%.0f ms", value)
            : value >= 10 ? String(format: "%.1f ms", value) : String(format: "%.2f ms", value)
    }

    static func seconds(_ value: Duration) -> String { String(format: "%.2f s", value.seconds) }

    static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

    static func mib(_ value: Double) -> String { String(format: "%.1f MiB", value) }

    static func rate(_ value: Double, _ unit: String) -> String { "\(Int(value.rounded())) \(unit)/s" }
}
