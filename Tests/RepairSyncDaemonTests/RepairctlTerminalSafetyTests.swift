import BackendTestSupport
import Foundation
import NIOHTTP1
import RepairSyncProtocol
import RepairSyncTestSupport
import Testing

/// Text from the server or a customer, shown by the real `repairctl` against a daemon and a development backend:
/// its control sequences reach the terminal as visible text, never as commands; `--json` keeps it exact.
@Suite("repairctl terminal safety", .serialized)
struct RepairctlTerminalSafetyTests {
    /// An OSC 52 clipboard write, a clear screen, a carriage return that would hide "paid" under "owed", the
    /// one-byte C1 CSI, a right-to-left override, DEL and a CRLF.
    static let hostile = "paid\r\u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J owed\u{9B}2J\u{202E}gnol\u{7F}\r\nend"

    @Test("an order note set on the server: `order show` shows its escapes, `--json` carries it byte for byte")
    func orderNote() async throws {
        try await DaemonHarness.with(orders: 5) { h in
            try await h.start()
            let edit = try await h.backend.send(
                .PATCH, "/admin/records/orders/ord_1", json: "{\"notes\": \(JSONString.quoted(Self.hostile))}")
            #expect(edit.status == 200, "\(edit.text)")
            #expect(try await h.repairctl(["sync", "--wait"]).status == 0)

            let shown = try await h.repairctl(["order", "show", "ord_1"])
            #expect(shown.status == 0, "\(shown.stderr)")
            Self.expectNothingObeyed(shown.stdout)
            let noteShown = shown.stdout.contains(
                #"notes:    paid \u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J owed\u{9B}2J\u{202E}gnol\u{7F} end"#)
            #expect(noteShown, "\(shown.stdout.debugDescription)")

            let json = try await h.repairctl(["order", "show", "ord_1", "--json"])
            #expect(json.status == 0, "\(json.stderr)")
            let document = try JSONParser().parse(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(document["order"]?["notes"] == .string(Self.hostile))
        }
    }

    @Test("repairsyncd doctor shows a detail's escapes (here a configuration path's), never obeys them")
    func daemonDoctorDetail() async throws {
        let directory = try TemporaryDirectory(prefix: "doctor-escapes")
        let path = directory.path("shop\u{1B}]52;c;cHduZWQ=\u{07}\u{1B}[2J.yaml")
        let result = try await DaemonHarness.runDaemonBinary(["doctor", "--config", path])
        #expect(result.status == 1, "no configuration there: \(result)")
        #expect(!result.stdout.isEmpty)
        #expect(!result.stdout.unicodeScalars.contains("\u{1B}"), "no escape reaches the terminal: \(result.stdout)")
        #expect(result.stdout.contains(#"shop\u{1B}]52;c;cHduZWQ=\u{07}\u{1B}[2J.yaml"#), "\(result.stdout)")
    }

    @Test("a ticket's subject and a message's content: shown, not obeyed; the message keeps its lines")
    func ticket() async throws {
        try await DaemonHarness.with(orders: 5) { h in
            try await h.start()
            let edit = try await h.backend.send(
                .PATCH, "/admin/records/tickets/tkt_1", json: "{\"subject\": \(JSONString.quoted(Self.hostile))}")
            #expect(edit.status == 200, "\(edit.text)")
            #expect(try await h.repairctl(["sync", "--wait"]).status == 0)
            #expect(try await h.repairctl(["ticket", "reply", "tkt_1", Self.hostile]).status == 0)

            let shown = try await h.repairctl(["ticket", "show", "tkt_1"])
            #expect(shown.status == 0, "\(shown.stderr)")
            Self.expectNothingObeyed(shown.stdout)
            // The subject on its one line; the message with its CRLF as a line break and its lone CR shown.
            let subjectShown = shown.stdout.contains(
                #"Ticket #5001: paid \u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J owed\u{9B}2J\u{202E}gnol\u{7F} end"#)
            #expect(subjectShown, "\(shown.stdout.debugDescription)")
            let messageShown = shown.stdout.contains(
                #"paid\u{0D}\u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J owed\u{9B}2J\u{202E}gnol\u{7F}"# + "\nend\n")
            #expect(messageShown, "\(shown.stdout.debugDescription)")
        }
    }

    /// No ESC, no C1 control, no lone carriage return, no bidi override or isolate, no DEL in what a person sees.
    /// A failure names the code points, never prints them (a test log is read on a terminal too).
    static func expectNothingObeyed(_ output: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let scalars = Array(output.unicodeScalars)
        let obeyed = scalars.indices.filter { index in
            let value = scalars[index].value
            switch value {
            case 0x0D: return index + 1 == scalars.count || scalars[index + 1] != "\n"  // a lone CR
            case 0x0A, 0x09: return false
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }.map { "U+" + String(scalars[$0].value, radix: 16, uppercase: true) }
        #expect(obeyed.isEmpty, "reached the terminal: \(obeyed)", sourceLocation: sourceLocation)
    }
}
