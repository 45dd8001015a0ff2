import Foundation
import RepairSyncProtocol
import Testing

/// The catalogue itself, and docs/rpc.md held to it.
@Suite("The method catalogue")
struct CatalogueTests {
    @Test("names are unique, and every params type lists its names")
    func names() {
        let names = RPC.methods.map { $0.name }
        #expect(Set(names).count == names.count)
        #expect(names.count == 33)
        #expect(RPC.method(named: "discard") == RPC.Discard.self)
        #expect(Self.params(RPC.ReplyToTicket.self) == ["ticketId", "content", "internal", "id"])
        #expect(Self.params(RPC.Ping.self) == [])
    }

    static func params<M: ControlMethod>(_ method: M.Type) -> [String] { M.Params.names }
    static func paramsOf(_ method: any ControlMethod.Type) -> [String] { params(method) }

    /// docs/rpc.md, section by `## ` heading.
    static func sections() throws -> [String: [String]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/rpc.md"), encoding: .utf8)
        var sections: [String: [String]] = [:]
        var current = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("## ") {
                current = String(line.dropFirst(3))
            } else {
                sections[current, default: []].append(line)
            }
        }
        return sections
    }

    /// The cells of the table rows whose first cell is a name in backticks.
    static func rows(_ lines: [String]) -> [[String]] {
        lines.filter { $0.hasPrefix("| `") }.map { line in
            // A `\|` inside a cell is text, not a separator.
            line.replacingOccurrences(of: "\\|", with: "\u{0}").split(separator: "|", omittingEmptySubsequences: false)
                .dropFirst().dropLast().map {
                    $0.replacingOccurrences(of: "\u{0}", with: "|").trimmingCharacters(in: .whitespaces)
                }
        }
    }

    /// The words in backticks of a cell, without a trailing `?`.
    static func backticked(_ cell: String) -> Set<String> {
        Set(cell.matches(of: /`([^`]+)`/).map { String($0.1).replacingOccurrences(of: "?", with: "") })
    }

    @Test("docs/rpc.md lists every method with its access level and params, and nothing else")
    func methodsDocumented() throws {
        let rows = Self.rows(try Self.sections()["Methods"] ?? [])
        var documented: [String: [String]] = [:]
        for row in rows {
            let names = Self.backticked(row[0])
            #expect(names.count == 1, "one method per row: \(row[0])")
            guard let name = names.first else { continue }
            #expect(documented[name] == nil, "\(name) is documented twice")
            documented[name] = row
        }
        let catalogue = Set(RPC.methods.map { $0.name })
        #expect(
            Set(documented.keys) == catalogue,
            "documented but not in the catalogue: \(Set(documented.keys).subtracting(catalogue)); missing: \(catalogue.subtracting(documented.keys))"
        )
        for method in RPC.methods {
            guard let row = documented[method.name] else { continue }
            #expect(row.count == 4, "\(method.name): method | access | params | result")
            #expect(
                row[1] == method.access.rawValue, "\(method.name) is \(method.access.rawValue), the docs say \(row[1])")
            #expect(Self.backticked(row[2]) == Set(Self.paramsOf(method)), "\(method.name)'s params: \(row[2])")
        }
    }

    @Test("docs/rpc.md lists every notification and every error code, and nothing else")
    func notificationsAndErrors() throws {
        let sections = try Self.sections()
        let notifications = Set(Self.rows(sections["Notifications"] ?? []).flatMap { Self.backticked($0[0]) })
        #expect(notifications == Set(RPC.notifications.map { $0.name }))
        let codes = (sections["Errors"] ?? []).compactMap { line -> Int? in
            guard line.hasPrefix("| -") else { return nil }
            return Int(line.dropFirst(2).prefix { $0 != " " && $0 != "|" })
        }
        #expect(Set(codes) == Set(ErrorCode.allCases.map(\.rawValue)))
        #expect(codes.count == ErrorCode.allCases.count)
    }

    @Test("the documented protocol number is the catalogue's")
    func protocolVersion() throws {
        let rows = Self.rows(try Self.sections()["Methods"] ?? [])
        let version = rows.first { $0[0] == "`version`" }
        #expect(version?[3].contains(#""protocol": \#(RPC.protocolVersion)"#) == true)
    }
}
