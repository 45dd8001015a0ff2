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
}
