internal import Foundation

/// One measured figure of a scenario: its value, and when it has one, the target it must meet.
public struct Figure: Sendable, Codable {
    public var name: String
    public var value: String
    public var target: String?
    /// nil: reported only; false: the target was missed.
    public var passed: Bool?

    public init(_ name: String, _ value: String, target: String? = nil, passed: Bool? = nil) {
        self.name = name
        self.value = value
        self.target = target
        self.passed = passed
    }

    /// A count that must be exactly `expected` (0 for losses, duplicates, crashes…).
    public static func count(_ name: String, _ value: Int, mustBe expected: Int) -> Figure {
        Figure(name, "\(value)", target: "= \(expected)", passed: value == expected)
    }

    public static func atMost(_ name: String, _ value: Int, _ limit: Int) -> Figure {
        Figure(name, "\(value)", target: "≤ \(limit)", passed: value <= limit)
    }

    public static func atLeast(_ name: String, _ value: Int, _ floor: Int) -> Figure {
        Figure(name, "\(value)", target: "≥ \(floor)", passed: value >= floor)
    }

    public static func check(_ name: String, _ ok: Bool, _ detail: String = "") -> Figure {
        Figure(name, ok ? (detail.isEmpty ? "yes" : detail) : "NO \(detail)", target: "yes", passed: ok)
    }
}

/// What one scenario run measured.
public struct ScenarioReport: Sendable, Codable {
    public var scenario: String
    public var figures: [Figure] = []
    /// Things worth reading when a figure fails (the end of a log, the first mismatches).
    public var notes: [String] = []
    public var seconds: Double = 0

    public init(scenario: String) { self.scenario = scenario }

    /// True when every figure with a target met it.
    public var passed: Bool { figures.allSatisfy { $0.passed != false } }

    public mutating func add(_ figure: Figure) { figures.append(figure) }

    public func figure(_ name: String) -> Figure? { figures.first { $0.name == name } }

    /// Times `body` into `seconds`.
    public static func measure(
        _ scenario: String, _ body: (inout ScenarioReport) async throws -> Void
    ) async throws -> ScenarioReport {
        var report = ScenarioReport(scenario: scenario)
        let start = ContinuousClock.now
        try await body(&report)
        let elapsed = ContinuousClock.now - start
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }
}
