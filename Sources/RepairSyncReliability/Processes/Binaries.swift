public import Foundation

/// Where the built programs are: next to the running executable (`.build/debug/repairsync-soak`, or the test
/// bundle in the same folder), or `REPAIRSYNC_BIN` when set.
public enum Binaries {
    public static var directory: URL {
        if let path = ProcessInfo.processInfo.environment["REPAIRSYNC_BIN"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    public static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}
