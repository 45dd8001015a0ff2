import Foundation
import RepairSyncProtocol

/// What a command printed, made comparable across runs: times, durations, sizes, ports, UUIDs and the temporary
/// directory become placeholders; everything else — the words, the columns, the values of the seeded store, the
/// exit status — stays as printed.
struct GoldenTranscript {
    let directory: String
    private(set) var text = ""

    init(directory: String) { self.directory = directory }

    /// Keys whose numbers depend on timing, the machine or the request count.
    static let volatileNumbers: Set<String> = [
        "durationMilliseconds", "clockOffsetMs", "storeBytes", "ageSeconds", "lastDurationMs", "averageDurationMs",
        "bytes", "retryAfterMilliseconds", "nextChangeDueMilliseconds",
    ]
    /// Objects whose every number is volatile.
    static let volatileObjects: Set<String> = ["httpResponses"]
    /// Keys whose strings depend on the machine.
    static let volatileStrings: Set<String> = ["probe"]
    /// Keys whose whole value depends on timing: the link as measured (null before a request was timed, then its
    /// figures and verdict — on a loaded machine even a loopback link can look slow).
    static let volatileValues: Set<String> = ["link"]
    /// Table lines whose numbers are timings or request counts.
    static let volatileLines = ["average duration (ms)", "last duration (ms)", "HTTP responses since start"]

    mutating func add(_ arguments: [String], _ result: (status: Int32, stdout: String, stderr: String)) {
        text +=
            "$ repairctl " + placeholders(arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " "))
            + "\n"
        if result.status != 0 { text += "(exit \(result.status))\n" }
        if arguments.contains("--json"),
            let json = try? JSONParser(limits: .init(maxDepth: 100, maxNumberLength: 100))
                .parse(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            text += Self.pretty(normalized(json)) + "\n"
        } else {
            text += normalized(result.stdout)
        }
        if !result.stderr.isEmpty { text += "stderr: " + normalized(result.stderr) }
        text += "\n"
    }

    /// The output with placeholders. A placeholder changes a cell's width, and a table pads every row (its header
    /// too) for its widest cell: in a block of lines (up to an empty line) where anything was replaced, runs of
    /// spaces are compared as two.
    func normalized(_ output: String) -> String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var result = lines.map(placeholders)
        var start = 0
        while start < lines.count {
            guard !lines[start].isEmpty else {
                start += 1
                continue
            }
            let end = lines[start...].firstIndex(where: \.isEmpty) ?? lines.count
            if result[start..<end] != lines[start..<end] {
                for index in start..<end { result[index] = result[index].replacing(#/ {2,}/#, with: "  ") }
            }
            start = end
        }
        return result.joined(separator: "\n")
    }

    func placeholders(_ line: String) -> String {
        var text = line.replacingOccurrences(of: directory, with: "<dir>")
        // The link's verdict and figures after "online" (see volatileValues).
        text = text.replacing(/online, (good|slow) link[^(]*\(/, with: "online (")
        if Self.volatileLines.contains(where: text.hasPrefix) { text = text.replacing(/\b\d+\b/, with: "<n>") }
        text = text.replacing(/127\.0\.0\.1:\d+/, with: "127.0.0.1:<port>")
        text = text.replacing(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/, with: "<time>")
        text = text.replacing(
            /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/, with: "<uuid>")
        text = text.replacing(/\d+ (s|min|h|d) ago|just now/, with: "<ago>")
        text = text.replacing(/in \d+ h \d+ min|in \d+ (s|min)/, with: "in <n>")
        text = text.replacing(/-?\d+ ms\b/, with: "<n> ms")
        text = text.replacing(/\d+(\.\d+)? MiB/, with: "<n> MiB")
        text = text.replacing(/probe: \w+/, with: "probe: <mode>")
        text = text.replacing(/\d+ bytes/, with: "<n> bytes")
        return text
    }

    func normalized(_ value: JSONValue, key: String? = nil, volatileNumbers all: Bool = false) -> JSONValue {
        if let key, Self.volatileValues.contains(key) { return .string("<\(key)>") }
        switch value {
        case .number where all || key.map(Self.volatileNumbers.contains) == true: return .string("<n>")
        case .string where key.map(Self.volatileStrings.contains) == true: return .string("<\(key!)>")
        case .string(let text): return .string(placeholders(text))
        case .array(let values): return .array(values.map { normalized($0, key: key, volatileNumbers: all) })
        case .object(let members):
            return .object(
                members.map { member in
                    (
                        member.key,
                        normalized(
                            member.value, key: member.key,
                            volatileNumbers: all || Self.volatileObjects.contains(member.key))
                    )
                })
        default: return value
        }
    }

    /// Indented JSON, members in the order the daemon wrote them.
    static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let values) where !values.isEmpty:
            return "[\n" + values.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members) where !members.isEmpty:
            return "{\n"
                + members.map { inner + JSONString.quoted($0.key) + ": " + pretty($0.value, indent: inner) }
                .joined(separator: ",\n") + "\n\(indent)}"
        default:
            return value.serialized
        }
    }
}
