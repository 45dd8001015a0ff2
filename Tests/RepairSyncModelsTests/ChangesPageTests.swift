import Foundation
import RepairSyncModels
import Testing

/// docs/api.md 4.2: cursors are opaque. A server may send `next_cursor` as a bare JSON number.
@Suite("Changes pages")
struct ChangesPageTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test("a cursor sent as a whole number is kept as its digits, past Int64 too; anything else is refused")
    func numericCursors() throws {
        func page(_ cursor: String) -> String {
            #"{"data":[],"deleted":[],"next_cursor":\#(cursor),"has_more":false}"#
        }
        #expect(try decode(ChangesPage<Order>.self, page("42")).nextCursor == "42")
        #expect(try decode(ChangesPage<Order>.self, page("-7")).nextCursor == "-7")
        #expect(try decode(ChangesPage<Order>.self, page("18446744073709551615")).nextCursor == "18446744073709551615")
        for refused in ["18446744073709551616", "1.5", "null", "true"] {
            #expect(throws: DecodingError.self, "\(refused)") { try decode(ChangesPage<Order>.self, page(refused)) }
        }
    }

    @Test("a page without a next_cursor (absent or null) is refused saying so")
    func missingCursor() throws {
        for page in [
            #"{"data":[],"deleted":[],"has_more":false}"#,
            #"{"data":[],"deleted":[],"next_cursor":null,"has_more":false}"#,
        ] {
            do {
                _ = try decode(ChangesPage<Order>.self, page)
                Issue.record("taken: \(page)")
            } catch let error as DecodingError {
                #expect(error.summary == "next_cursor: a page without a next_cursor", "\(error.summary)")
            }
        }
    }

    @Test("the reason a page is refused is one line of at most 300 characters, whatever the server's text it quotes")
    func reasonIsBounded() throws {
        let id = String(repeating: "x", count: 100_000)
        let page =
            #"{"data":[],"deleted":[{"id":"\#(id)","deleted_at":"2026-11-20T09:00:00.000Z"},{"id":"\#(id)","deleted_at":"2026-11-20T09:00:00.000Z"}],"next_cursor":"c","has_more":false}"#
        do {
            _ = try decode(ChangesPage<Order>.self, page)
            Issue.record("a page with an id twice was taken")
        } catch let error as DecodingError {
            #expect(error.summary.count == DecodingError.summaryLimit + 1 && error.summary.hasSuffix("…"))
            #expect(error.summary.hasPrefix("data: xxx"), "\(error.summary.prefix(80))")
        }
    }
}
