internal import CSystemd
internal import Foundation
public import Logging

#if canImport(Glibc)
    internal import Glibc
#endif

/// Logs to the systemd journal with structured fields (`sd_journal_sendv`): `MESSAGE`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, `LOGGER`, and every metadata key as
/// `REPAIRSYNCD_<KEY>`, so `journalctl -u repairsyncd REPAIRSYNCD_RUN=12` finds one run's lines. When the journal
/// cannot be written, the line goes to stderr instead (never lost silently).
public struct JournaldLogHandler: LogHandler {
    public var metadataProvider: Logger.MetadataProvider?
    public var metadata: Logger.Metadata = [:]
    let label: String
    let level: SharedLogLevel

    public init(label: String, level: SharedLogLevel) {
        self.label = label
        self.level = level
    }

    public var logLevel: Logger.Level {
        get { level.value }
        set { level.value = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        // Made safe once, all of it (`LogEvent.safe`): the handler's, the provider's and the event's.
        merged = LogEvent.safe(merged)
        let message = LogEvent.safe(event.message)
        let text =
            merged.isEmpty
            ? "\(message)"
            : "\(message) "
                + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var fields = [
            "MESSAGE=\(text)", "PRIORITY=\(Self.priority(event.level))", "SYSLOG_IDENTIFIER=repairsyncd",
            "CODE_FILE=\(event.file)", "CODE_LINE=\(event.line)", "CODE_FUNC=\(event.function)", "LOGGER=\(label)",
        ]
        for (key, value) in merged { fields.append("REPAIRSYNCD_\(Self.fieldName(key))=\(value)") }
        if Self.send(fields) < 0 {
            FileHandle.standardError.write(Data("<\(Self.priority(event.level))>\(text)\n".utf8))
        }
    }

    /// syslog priorities, as journald expects them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Journal field names are upper-case letters, digits and underscores.
    static func fieldName(_ key: String) -> String {
        String(key.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }

    private static func send(_ fields: [String]) -> Int32 {
        let copies = fields.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        var vectors = copies.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0!)) }
        return vectors.withUnsafeMutableBufferPointer { buffer in
            sd_journal_sendv(buffer.baseAddress, Int32(buffer.count))
        }
    }
}
