import BackendTestSupport
import Foundation
import RepairSyncModels
import Testing

@testable import RepairSyncEngine

/// Text JSON allows and the replica cannot keep: a NUL (SQLite stops at it) and a lone UTF-16 surrogate (the
/// decoder refuses it). Both found by a review playing a server not written here.
@Suite("Storable server text", .timeLimit(.minutes(2)))
struct StorableTextTests {
    @Test("a NUL and a lone surrogate become U+FFFD; pairs, escaped backslashes and other escapes stay as they came")
    func repairsOnlyWhatCannotBeStored() throws {
        func repaired(_ json: String) -> String {
            String(decoding: StorableJSON.repaired(Data(json.utf8)), as: UTF8.self)
        }
        #expect(repaired(#"{"a":"x\u0000y"}"#) == #"{"a":"x\ufffdy"}"#)
        #expect(repaired(#"{"a":"cut \ud83d"}"#) == #"{"a":"cut \ufffd"}"#)
        #expect(repaired(#"{"a":"\udc00\ud800x"}"#) == #"{"a":"\ufffd\ufffdx"}"#)
        #expect(repaired(#"{"a":"\ud800\u0041"}"#) == #"{"a":"\ufffd\u0041"}"#)
        for kept in [
            #"{"a":"pair \ud83d\ude00"}"#, #"{"a":"\\u0000 is text"}"#, #"{"a":"\\\u0041\n\"\/"}"#, #"{"a":"é ✓"}"#,
            #"{"a":"\u00e9"}"#, "[]", #"{"a":"ends with \\"}"#,
        ] {
            #expect(repaired(kept) == kept)
        }
        let page = try JSONDecoder().decode(
            [String: String].self, from: StorableJSON.repaired(Data(#"{"notes":"a\u0000b \ud83d"}"#.utf8)))
        #expect(page["notes"] == "a\u{FFFD}b \u{FFFD}")
    }

    /// Before: the row held "a" (SQLite stopped at the NUL) and its base copy the whole note, so the row read as a
    /// tool's edit and the next push sent `notes: "a"` over the server's note.
    @Test(
        "a server note with a NUL is stored whole (U+FFFD for the NUL), and a later edit of another field does not send it back"
    )
    func nulInAServerNoteIsNotSentBack() async throws {
        try await EngineHarness.with { h in
            _ = try await h.serverEdit("orders", "ord_4", #"{"notes":"first line\u0000second line"}"#)
            #expect(await h.engine.performFullSync().succeeded)
            #expect(try h.local(Order.self, "ord_4")?.notes == "first line\u{FFFD}second line")
            try await h.engine.update(.orders, id: "ord_4", fields: ["status": "ready"])
            #expect(try h.engine.outboxEntries().first?.fields.keys.sorted() == ["status"])
            #expect(await h.engine.sync([]).pushed == 1)
            let server = try await h.serverRecord(Order.self, "orders", "ord_4")
            #expect(server.notes == "first line\u{0}second line", "the server's note was overwritten")
            #expect(server.status.rawValue == "ready")
        }
    }
}
