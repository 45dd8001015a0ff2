public import Logging
internal import Synchronization

/// The daemon's log level, shared by every handler, so that a reloaded `log.level` takes effect at once.
public final class SharedLogLevel: Sendable {
    private let level: Mutex<Logger.Level>

    public init(_ level: Logger.Level) { self.level = Mutex(level) }

    public var value: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }
}
