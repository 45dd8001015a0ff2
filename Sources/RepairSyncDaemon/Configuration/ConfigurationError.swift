/// A configuration the daemon cannot start with: names the key, what was expected and what was found. The
/// daemon exits with 78 (EX_CONFIG) on it.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var key: String
    public var message: String

    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { "configuration key \(key): \(message)" }

    /// sysexits.h EX_CONFIG.
    public static let exitCode: Int32 = 78
}
