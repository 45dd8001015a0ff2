/// One event of a `text/event-stream` (the WHATWG "server-sent events" format): its type (`message` when the
/// stream named none), the last event id in force, and its data lines joined with newlines.
public struct ServerSentEvent: Sendable, Equatable {
    public var type: String
    public var id: String?
    public var data: String

    public init(type: String, id: String?, data: String) {
        self.type = type
        self.id = id
        self.data = data
    }
}

/// An incremental, bounded parser of `text/event-stream` bytes as they arrive, in chunks cut anywhere: lines end
/// with LF, CRLF or CR (a CRLF split between chunks counts once), `:` lines are comments (heartbeats), fields are
/// `event`, `data`, `id` and `retry`; unknown fields are ignored. A line longer than `maxLineBytes` or an event whose
/// data exceeds `maxEventBytes` fails the stream (`Failure`) rather than growing memory: a server that never sends
/// a newline cannot make the daemon buffer it. The daemon's `EventStreamClient` reads the change stream with it, and
/// `repair-api-conformance` judges a server's stream with it, so that what the tool accepts is what the daemon reads.
public struct ServerSentEventParser: Sendable {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case lineTooLong(limit: Int)
        case eventTooLarge(limit: Int)

        public var description: String {
            switch self {
            case .lineTooLong(let limit): "a line of the event stream is longer than \(limit) bytes"
            case .eventTooLarge(let limit): "an event of the stream carries more than \(limit) bytes of data"
            }
        }
    }

    public let maxLineBytes: Int
    public let maxEventBytes: Int
    /// The id of the last event (persists across events, as the format says).
    public private(set) var lastEventID: String?
    /// The last `retry:` the server asked for, in milliseconds.
    public private(set) var retryMilliseconds: Int?

    private var line: [UInt8] = []
    private var afterCR = false
    private var type = ""
    private var data: [UInt8] = []
    private var hasData = false
    private var startedBOM = true

    public init(maxLineBytes: Int = 4096, maxEventBytes: Int = 16384) {
        self.maxLineBytes = maxLineBytes
        self.maxEventBytes = maxEventBytes
        line.reserveCapacity(256)
    }

    /// Feeds the next bytes; returns the events they complete, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(Failure) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0A:
                if let event = try endLine() { events.append(event) }
            case 0x0D:
                afterCR = true
                if let event = try endLine() { events.append(event) }
            default:
                guard line.count < maxLineBytes else { throw .lineTooLong(limit: maxLineBytes) }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() throws(Failure) -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if startedBOM {
            startedBOM = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        if line.isEmpty { return dispatch() }
        if line[0] == 0x3A { return nil }  // ":" a comment: a heartbeat
        let field: [UInt8]
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: 0x3A) {
            field = Array(line[..<colon])
            value = line[(colon + 1)...]
            if value.first == 0x20 { value = value.dropFirst() }
        } else {
            field = line
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            type = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count + 1 <= maxEventBytes else { throw .eventTooLarge(limit: maxEventBytes) }
            data.append(contentsOf: value)
            data.append(0x0A)
            hasData = true
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }), value.count <= 9 {
                retryMilliseconds = Int(String(decoding: value, as: UTF8.self))
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            type = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData else { return nil }
        if data.last == 0x0A { data.removeLast() }
        return ServerSentEvent(
            type: type.isEmpty ? "message" : type, id: lastEventID, data: String(decoding: data, as: UTF8.self))
    }
}
