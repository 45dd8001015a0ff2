/// A strict, bounded JSON parser for untrusted input from the control socket (RFC 8259).
///
/// Bounded so that no line can cost more than linear time and constant stack: nesting deeper than `maxDepth`,
/// number literals longer than `maxNumberLength` and duplicate object keys are refused, as is invalid UTF-8.
/// (Foundation's parser has no depth limit one can set, accepts duplicate keys silently and turns numbers into
/// Doubles.)
public struct JSONParser: Sendable {
    public struct Limits: Sendable, Hashable {
        public var maxDepth: Int
        public var maxNumberLength: Int

        public init(maxDepth: Int = 64, maxNumberLength: Int = 100) {
            self.maxDepth = maxDepth
            self.maxNumberLength = maxNumberLength
        }
    }

    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not JSON at all (JSON-RPC parse error).
        case syntax(offset: Int, String)
        case invalidUTF8(offset: Int)
        /// JSON, but beyond what the socket accepts (JSON-RPC invalid request).
        case tooDeep(limit: Int)
        case numberTooLong(limit: Int)
        case duplicateKey(String)

        public var description: String {
            switch self {
            case .syntax(let offset, let message): "\(message) at byte \(offset)"
            case .invalidUTF8(let offset): "invalid UTF-8 at byte \(offset)"
            case .tooDeep(let limit): "nested deeper than \(limit) levels"
            case .numberTooLong(let limit): "a number literal longer than \(limit) characters"
            case .duplicateKey(let key): "duplicate key \"\(key)\""
            }
        }

        /// True when the text is not JSON (as opposed to JSON the socket refuses).
        public var isSyntaxError: Bool {
            switch self {
            case .syntax, .invalidUTF8: true
            case .tooDeep, .numberTooLong, .duplicateKey: false
            }
        }
    }

    public let limits: Limits

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Parses exactly one JSON value (surrounding whitespace allowed).
    public func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> JSONValue {
        var reader = Reader(bytes: Array(bytes), limits: limits)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == reader.bytes.count else {
            throw .syntax(offset: reader.index, "unexpected text after the value")
        }
        return value
    }

    public func parse(_ text: String) throws(Failure) -> JSONValue { try parse(Array(text.utf8)) }

    private struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        var index = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        func fail(_ message: String) -> Failure { .syntax(offset: index, message) }

        mutating func value(depth: Int) throws(Failure) -> JSONValue {
            guard index < bytes.count else { throw fail("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            for byte in word.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw fail("invalid literal") }
                index += 1
            }
        }

        mutating func object(depth: Int) throws(Failure) -> JSONValue {
            guard depth <= limits.maxDepth else { throw .tooDeep(limit: limits.maxDepth) }
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            var keys = Set<String>()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try string()
                guard keys.insert(key).inserted else { throw .duplicateKey(key) }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
                members.append((key, try value(depth: depth)))
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                } else {
                    throw fail("expected ',' or '}'")
                }
            }
        }

        mutating func array(depth: Int) throws(Failure) -> JSONValue {
            guard depth <= limits.maxDepth else { throw .tooDeep(limit: limits.maxDepth) }
            index += 1
            var values: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(values)
            }
            while true {
                skipWhitespace()
                values.append(try value(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(values)
                } else {
                    throw fail("expected ',' or ']'")
                }
            }
        }

        mutating func number() throws(Failure) -> String {
            let start = index
            func digits(_ reader: inout Reader) -> Int {
                let begin = reader.index
                while reader.index < reader.bytes.count,
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.index])
                {
                    reader.index += 1
                }
                return reader.index - begin
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { throw fail("incomplete number") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else if digits(&self) == 0 {
                throw fail("invalid number")
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { throw fail("digits expected after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits(&self) > 0 else { throw fail("digits expected in the exponent") }
            }
            guard index - start <= limits.maxNumberLength else { throw .numberTooLong(limit: limits.maxNumberLength) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func string() throws(Failure) -> String {
            index += 1
            // Most strings are plain ASCII with no escape: taken whole, in one step.
            let start = index
            while index < bytes.count, bytes[index] >= 0x20, bytes[index] < 0x80, bytes[index] != UInt8(ascii: "\""),
                bytes[index] != UInt8(ascii: "\\")
            {
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
            }
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: String(decoding: bytes[start..<index], as: UTF8.self).unicodeScalars)
            while true {
                guard index < bytes.count else { throw fail("unterminated string") }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw fail("unterminated escape") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                                bytes[index + 1] == UInt8(ascii: "u")
                            else { throw fail("unpaired surrogate") }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw fail("unpaired surrogate") }
                        scalars.append(scalar)
                    default:
                        throw fail("invalid escape")
                    }
                case 0x00..<0x20:
                    throw fail("control character in a string")
                case 0x00..<0x80:
                    scalars.append(Unicode.Scalar(byte))
                    index += 1
                default:
                    scalars.append(try utf8Scalar())
                }
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail("incomplete \\u escape") }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail("invalid \\u escape")
                }
                code = code << 4 | digit
                index += 1
            }
            return code
        }

        /// One multi-byte UTF-8 sequence, validated (no overlongs, no surrogates, at most U+10FFFF).
        mutating func utf8Scalar() throws(Failure) -> Unicode.Scalar {
            let start = index
            let lead = bytes[index]
            let (length, minimum): (Int, UInt32) =
                switch lead {
                case 0xC2...0xDF: (2, 0x80)
                case 0xE0...0xEF: (3, 0x800)
                case 0xF0...0xF4: (4, 0x10000)
                default: (0, 0)
                }
            guard length > 0, index + length <= bytes.count else { throw .invalidUTF8(offset: start) }
            var code = UInt32(lead) & (0xFF >> (length + 1))
            for offset in 1..<length {
                let byte = bytes[index + offset]
                guard byte & 0xC0 == 0x80 else { throw .invalidUTF8(offset: start) }
                code = code << 6 | UInt32(byte & 0x3F)
            }
            guard code >= minimum, let scalar = Unicode.Scalar(code) else { throw .invalidUTF8(offset: start) }
            index += length
            return scalar
        }
    }
}
