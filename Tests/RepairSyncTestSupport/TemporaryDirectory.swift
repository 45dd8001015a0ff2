public import Foundation

/// A fresh directory under the system's temporary folder, removed when the value is deinitialised.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "repairsyncd-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
