internal import Foundation
internal import RepairSyncModels

/// The outcome of a run: every selected check with its reason, and the writes the run made.
///
/// `exitCode` is 0 when every exercised check passed and 1 otherwise; checks not exercised or skipped never fail a
/// run, and never count as passes either.
public struct ConformanceReport: Sendable {
    public let baseURL: String
    public let results: [CheckResult]
    public let writes: [PlannedWrite]
    /// Set when the run stopped early (the server could not be reached), in words for people.
    public let abortedBecause: String?

    /// A run that never started: its command line was refused (`because`).
    public static func refused(because: String) -> ConformanceReport {
        ConformanceReport(baseURL: "", results: [], writes: [], abortedBecause: because)
    }

    public var failed: [CheckResult] { results.filter { $0.outcome == .failed } }
    public func count(_ outcome: Outcome) -> Int { results.filter { $0.outcome == outcome }.count }
    public var exitCode: Int32 { failed.isEmpty && abortedBecause == nil ? 0 : 1 }

    /// One line per check (`PASS  4.2  feed-paging:orders  …`), then the writes and a summary line.
    public var text: String {
        var lines: [String] = []
        let width = max(28, results.map(\.id.description.count).max() ?? 0)
        for result in results {
            let name = result.id.description.padding(toLength: width, withPad: " ", startingAt: 0)
            let section = result.section.padding(toLength: 4, withPad: " ", startingAt: 0)
            lines.append("\(result.outcome.tag)  \(section) \(name)  \(result.reason)")
        }
        if !writes.isEmpty {
            lines.append("")
            lines.append("Writes:")
            for write in writes {
                lines.append(
                    "  \(write.collection.name) \(write.id): \(write.what)"
                        + (write.restoration.map { "; \($0)" } ?? ""))
            }
        }
        if let abortedBecause {
            lines.append("")
            lines.append("Stopped: \(abortedBecause)")
        }
        lines.append("")
        lines.append(
            "\(results.count) checks: \(count(.passed)) passed, \(count(.failed)) failed, "
                + "\(count(.notExercised)) not exercised, \(count(.skipped)) skipped")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as one JSON document, for CI.
    public var json: String {
        let document = JSONReport(
            tool: "repair-api-conformance", version: ProductInfo.version, baseURL: baseURL,
            conforms: exitCode == 0, abortedBecause: abortedBecause,
            summary: Dictionary(uniqueKeysWithValues: Outcome.allCases.map { ($0.rawValue, count($0)) }),
            checks: results.map {
                .init(
                    id: $0.id.description, section: $0.section, clause: $0.clause, outcome: $0.outcome.rawValue,
                    reason: $0.reason)
            },
            writes: writes.map {
                .init(collection: $0.collection.name, id: $0.id, what: $0.what, restoration: $0.restoration)
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers and flat arrays of them cannot fail to encode.
        let data = (try? encoder.encode(document)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private struct JSONReport: Encodable {
        struct Check: Encodable {
            var id, section, clause, outcome, reason: String
        }
        struct Write: Encodable {
            var collection, id, what: String
            var restoration: String?
        }
        var tool: String
        var version: String
        var baseURL: String
        var conforms: Bool
        var abortedBecause: String?
        var summary: [String: Int]
        var checks: [Check]
        var writes: [Write]

        enum CodingKeys: String, CodingKey {
            case tool, version, conforms, summary, checks, writes
            case baseURL = "base_url"
            case abortedBecause = "aborted_because"
        }
    }
}
