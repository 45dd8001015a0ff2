internal import Foundation

/// A server's JSON made storable before it is decoded: two escapes JSON allows in a string and the replica cannot
/// keep become U+FFFD (the replacement character).
///
/// - `\u0000`: SQLite takes a bound string up to its first NUL, so a note "a\u0000b" was stored as "a" while its
///   base copy (JSON) kept the whole — the row then differed from its base, read as a tool's edit, and "a" was
///   PATCHed back over the server's note.
/// - a lone UTF-16 surrogate (`\ud83d` not followed by its low half, or a low half alone), which a server sends when
///   it cut a string inside an emoji (JavaScript's `JSON.stringify`, Python's `json.dumps`): the decoder refused the
///   whole page, every run, and the collection never synced again.
///
/// The text is scanned for backslashes only (`memchr`); an answer without those escapes is returned as it came.
enum StorableJSON {
    static func repaired(_ body: Data) -> Data {
        body.withUnsafeBytes { raw -> Data? in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            return repaired(UnsafeBufferPointer(start: base, count: raw.count))
        } ?? body
    }

    private static let backslash = UInt8(ascii: "\\")
    private static let replacement = Array(#"\ufffd"#.utf8)

    /// nil when nothing needed repair.
    private static func repaired(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        let count = bytes.count
        var output: [UInt8]?
        var copied = 0
        var index = 0
        while index < count, let found = memchr(bytes.baseAddress! + index, Int32(backslash), count - index) {
            let at = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
            guard at + 1 < count, bytes[at + 1] == UInt8(ascii: "u"), let unit = hex4(bytes, at + 2) else {
                index = at + 2  // another escape (`\\` included): its character is not a backslash to look at
                continue
            }
            var bad: Bool
            switch unit {
            case 0: bad = true
            case 0xD800...0xDBFF:
                bad = true
                if at + 11 < count, bytes[at + 6] == backslash, bytes[at + 7] == UInt8(ascii: "u"),
                    let low = hex4(bytes, at + 8), (0xDC00...0xDFFF).contains(low)
                {
                    index = at + 12
                    continue
                }
            case 0xDC00...0xDFFF: bad = true
            default: bad = false
            }
            if bad {
                if output == nil { output = Array(repeating: 0, count: 0) }
                output!.append(contentsOf: bytes[copied..<at])
                output!.append(contentsOf: replacement)
                copied = at + 6
            }
            index = at + 6
        }
        guard var output else { return nil }
        output.append(contentsOf: bytes[copied..<count])
        return Data(output)
    }

    /// The four hex digits at `start`, or nil.
    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> UInt16? {
        guard start + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = bytes[start + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
