public import Foundation
public import Logging

/// Where the daemon's logs go: the journal, with structured fields, when systemd connected stderr to it
/// (`JOURNAL_STREAM`), else stderr. Secrets are never passed to a logger in the first place.
public enum DaemonLogging {
    public static func bootstrap(
        level: SharedLogLevel, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        let journal = environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in
            if journal { return JournaldLogHandler(label: label, level: level) }
            return LevelTrackingHandler(upstream: StreamLogHandler.standardError(label: label), level: level)
        }
    }

    public static func level(_ level: DaemonConfiguration.LogLevel) -> Logger.Level {
        Logger.Level(rawValue: level.rawValue) ?? .info
    }
}

/// A handler whose level follows the shared level (so a reload changes it).
struct LevelTrackingHandler: LogHandler {
    var upstream: StreamLogHandler
    let level: SharedLogLevel

    var metadataProvider: Logger.MetadataProvider? {
        get { upstream.metadataProvider }
        set { upstream.metadataProvider = newValue }
    }

    var metadata: Logger.Metadata {
        get { upstream.metadata }
        set { upstream.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { level.value }
        set { level.value = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { upstream[metadataKey: key] }
        set { upstream[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) { upstream.log(event: event.safe) }
}
