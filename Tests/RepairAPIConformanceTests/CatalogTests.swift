import Foundation
import RepairAPIConformance
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
            #expect(api.contains("\n## \(clause.section).") || api.contains("\n### \(clause.section) "), "no section \(clause.section)")
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
        for defect in ["ignore_if_match", "forget_idempotency_keys", "drop_date_header", "float_money", "repeat_page", "skip_records"] {
            #expect(api.contains("`\(defect)`"), "defect \(defect) is not documented")
        }
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
