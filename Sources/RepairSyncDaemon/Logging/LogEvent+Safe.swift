internal import Logging
internal import RepairSyncProtocol

/// A log line carries values from callers and servers (a record id sent over the socket, an error a server wrote):
/// a newline in one forged a whole line of the daemon's own in its log, a NUL cut the journal's `MESSAGE` short
/// (`sd_journal_sendv` takes C strings) and an escape sequence drove the terminal of whoever read the log. Every
/// control character of the message and the metadata is shown instead (`TerminalSafe.line`: `\u{1B}`, a line break
/// as a space), before either handler formats the line.
extension LogEvent {
    var safe: LogEvent {
        var event = self
        event.message = Self.safe(message)
        event.metadata = metadata.map(Self.safe)
        return event
    }

    static func safe(_ message: Logger.Message) -> Logger.Message {
        Logger.Message(stringLiteral: TerminalSafe.line(message.description))
    }

    static func safe(_ metadata: Logger.Metadata) -> Logger.Metadata {
        metadata.mapValues(safe)
    }

    private static func safe(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let text): .string(TerminalSafe.line(text))
        case .stringConvertible(let convertible): .string(TerminalSafe.line(convertible.description))
        case .dictionary(let dictionary): .dictionary(safe(dictionary))
        case .array(let values): .array(values.map(safe))
        }
    }
}
