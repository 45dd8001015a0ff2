internal import Crypto
internal import Foundation

/// Device passcodes at rest: AES-GCM under a 256-bit key the daemon gets from a credential or key file. The replica
/// holds `aesgcm1:<base64 of nonce ‖ ciphertext ‖ tag>`; without a key, passcodes are not stored at all.
///
/// ```swift
/// let cipher = try PasscodeCipher(keyText: "q2…=")   // 32 bytes, base64 or 64 hex digits
/// let stored = cipher.seal("1234")                   // "aesgcm1:…"
/// cipher.open(stored)                                // "1234"
/// ```
public struct PasscodeCipher: Sendable {
    static let prefix = "aesgcm1:"
    private let key: SymmetricKey

    public enum KeyError: Error, CustomStringConvertible {
        case invalid
        public var description: String { "a passcode key is 32 bytes, written as base64 or as 64 hex digits" }
    }

    public init(keyText: String) throws(KeyError) {
        let text = keyText.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 64, let bytes = Self.hex(text) {
            key = SymmetricKey(data: bytes)
        } else if let data = Data(base64Encoded: text), data.count == 32 {
            key = SymmetricKey(data: data)
        } else {
            throw .invalid
        }
    }

    /// The sealed form of a passcode (nil stays nil).
    public func seal(_ passcode: String?) -> String? {
        guard let passcode, let box = try? AES.GCM.seal(Data(passcode.utf8), using: key), let combined = box.combined
        else { return nil }
        return Self.prefix + combined.base64EncodedString()
    }

    /// The passcode, or nil when there is none or it does not open with this key.
    public func open(_ stored: String?) -> String? {
        guard let stored, stored.hasPrefix(Self.prefix),
            let combined = Data(base64Encoded: String(stored.dropFirst(Self.prefix.count))),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: key)
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    private static func hex(_ text: String) -> Data? {
        var bytes = Data()
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
