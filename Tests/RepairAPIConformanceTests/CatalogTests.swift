import Foundation
import RepairAPIConformance
import RepairAPIDev
import RepairSyncModels
import Testing

/// The list of checks stays one per clause, tied to the daemon's wire types and to docs/api.md.
@Suite("Conformance catalog")
struct CatalogTests {
    @Test("check names are unique and every clause has a section of docs/api.md")
    func uniqueNames() throws {
        let ids = ConformanceCatalog.checkIDs.map(\.description)
        #expect(Set(ids).count == ids.count)
        let api = try String(contentsOf: Self.repository.appendingPathComponent("docs/api.md"), encoding: .utf8)
        for clause in ConformanceCatalog.clauses {
            #expect(
                api.contains("\n## \(clause.section).") || api.contains("\n### \(clause.section) "),
                "no section \(clause.section)")
        }
    }

    @Test("docs/api.md \"Checking a server\" lists every check with its section")
    func documented() throws {
        let api = try String(contentsOf: Self.repository.appendingPathComponent("docs/api.md"), encoding: .utf8)
        let section = try #require(api.range(of: "## 8. Checking a server")).upperBound
        let text = String(api[section...])
        for clause in ConformanceCatalog.clauses {
            #expect(text.contains("| \(clause.section) | `\(clause.id)`"), "\(clause.id) is not in the table")
        }
        for defect in Defect.allCases.map(\.rawValue) {
            #expect(api.contains("`\(defect)`"), "defect \(defect) is not documented")
        }
    }

    @Test("every section of the contract (2 to 6) has a check, or is listed as not checkable with the reason")
    func everySectionChecked() throws {
        let sections = try Self.contractSections()
        // The document's own numbering, as read: 2.1…2.6, 3.1…3.6, 4.1…, 5, 6.
        #expect(
            sections.contains("2.1") && sections.contains("4.2") && sections.contains("5") && sections.contains("6"))
        let checked = Set(ConformanceCatalog.clauses.flatMap { [$0.section] + $0.covers })
        let excused = Set(ConformanceCatalog.uncheckable.map(\.section))
        for (section, reason) in ConformanceCatalog.uncheckable {
            #expect(
                sections.contains(section), "\(section) is listed as not checkable but is no section of docs/api.md")
            #expect(!checked.contains(section), "\(section) is listed as not checkable but has a check")
            #expect(reason.count > 10, "\(section) is listed as not checkable without a reason")
        }
        let unchecked = sections.filter { !checked.contains($0) && !excused.contains($0) }
        #expect(
            unchecked == [], "sections of docs/api.md without a check, and not listed as not checkable: \(unchecked)")
    }

    /// The numbers of the contract's sections, 2 to 6 of docs/api.md: each `###` subsection, and each `##` section
    /// that has none (5, 6).
    static func contractSections() throws -> [String] {
        let api = try String(contentsOf: repository.appendingPathComponent("docs/api.md"), encoding: .utf8)
        var sections: [String] = []
        var inContract = false
        var chapter: String?
        var chapterHasSubsections = false
        func closeChapter() {
            if let chapter, !chapterHasSubsections { sections.append(chapter) }
        }
        for line in api.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.wholeMatch(of: /## (\d+)\. .*/) {
                closeChapter()
                let number = Int(match.1) ?? 0
                inContract = (2...6).contains(number)
                chapter = inContract ? String(match.1) : nil
                chapterHasSubsections = false
            } else if inContract, let match = line.wholeMatch(of: /### (\d+\.\d+) .*/) {
                sections.append(String(match.1))
                chapterHasSubsections = true
            }
        }
        closeChapter()
        return sections
    }

    @Test("each record shape names exactly the keys of the daemon's wire type", arguments: SyncCollection.allCases)
    func shapesMatchWireTypes(_ collection: SyncCollection) {
        let wire: [String] =
            switch collection {
            case .orders: Order.CodingKeys.allCases.map(\.rawValue)
            case .devices: Device.CodingKeys.allCases.map(\.rawValue)
            case .clients: Client.CodingKeys.allCases.map(\.rawValue)
            case .tickets: Ticket.CodingKeys.allCases.map(\.rawValue)
            case .ticketMessages: TicketMessage.CodingKeys.allCases.map(\.rawValue)
            }
        #expect(Set(RecordShape.of(collection).keys) == Set(wire))
        #expect(RecordShape.of(collection).keys.count == wire.count)
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
