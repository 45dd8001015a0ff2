import RepairSyncProtocol
import Testing

/// What repairctl shows of a value: control characters shown, never obeyed; ordinary text untouched.
@Suite("Terminal-safe text")
struct TerminalSafeTests {
    @Test("every control sequence a terminal would obey is shown as \\u{…} instead")
    func escapes() {
        let cases: [(String, String)] = [
            ("\u{1B}[2J", #"\u{1B}[2J"#),
            ("\u{1B}]52;c;ZXZpbA==\u{07}", #"\u{1B}]52;c;ZXZpbA==\u{07}"#),
            ("\u{1B}]0;title\u{07}", #"\u{1B}]0;title\u{07}"#),
            ("a\u{9B}31mb", #"a\u{9B}31mb"#),
            ("paid\rowed", #"paid\u{0D}owed"#),
            ("abc\u{202E}fed", #"abc\u{202E}fed"#),
            (
                "\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}",
                #"\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}"#
            ),
            ("nul\u{00}del\u{7F}", #"nul\u{00}del\u{7F}"#),
            ("\u{80}\u{9F}\u{1F}\u{08}", #"\u{80}\u{9F}\u{1F}\u{08}"#),
        ]
        for (text, shown) in cases {
            #expect(TerminalSafe.text(text) == shown, "\(text.debugDescription)")
            // On one line a lone CR is a line break, so a space; everything else is shown the same.
            #expect(
                TerminalSafe.line(text) == (text.contains("\r") ? "paid owed" : shown), "\(text.debugDescription)")
        }
    }

    @Test("nothing a terminal obeys is left: no ESC, C1, lone CR, bidi override, DEL or NUL")
    func nothingObeyed() {
        let hostile = "x\u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J\r\u{9B}2J\u{202E}\u{00}\u{7F}\r\ny"
        for safe in [TerminalSafe.text(hostile), TerminalSafe.line(hostile)] {
            #expect(
                !safe.unicodeScalars.contains {
                    $0.value < 0x20 && $0 != "\n" && $0 != "\t" || (0x7F...0x9F).contains($0.value)
                        || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
                })
        }
    }

    @Test("text keeps its lines and tabs; CRLF (one Character in Swift) is one line break")
    func lines() {
        #expect(TerminalSafe.text("one\r\ntwo\nthree\tfour") == "one\ntwo\nthree\tfour")
        #expect(TerminalSafe.text("\r\n\r\n") == "\n\n")
        #expect(TerminalSafe.text("\r\r\n") == #"\u{0D}"# + "\n")
    }

    @Test("a line: every line break and tab is one space, CRLF included")
    func oneLine() {
        #expect(TerminalSafe.line("a\r\nb\rc\nd\u{2028}e\u{2029}f\tg") == "a b c d e f g")
        #expect(TerminalSafe.line("\u{1B}\r\n") == #"\u{1B} "#)
    }

    @Test("ordinary text, accented letters, other scripts, emoji and a literal backslash are untouched")
    func ordinary() {
        for text in [
            "", "Screen cracked, customer wants it by Friday.", "Café déjà vu — Zoë’s iPhone", "é\u{301}",
            "שלום עולם", "مرحبا", "日本語のテキスト", "😀👍🏽👨‍👩‍👧", "C:\\Users\\zoe \\u{1B}", "€ 150.00",
        ] {
            #expect(TerminalSafe.text(text) == text)
            #expect(TerminalSafe.line(text) == text)
        }
    }
}
