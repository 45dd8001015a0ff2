extension DecodingError {
    /// Where in the document and why, in one line — `data[3].total: "12,50" is not a decimal amount` — rather than
    /// Foundation's paragraph about coding keys and contexts. For an answer refused as malformed, told to an admin:
    /// at most `summaryLimit` characters, since the reason may quote the server's text (a hostile server's megabyte
    /// would otherwise travel into the outbox, the status and the journal).
    public var summary: String {
        let text = fullSummary
        guard text.count > Self.summaryLimit else { return text }
        return String(text.prefix(Self.summaryLimit)) + "…"
    }

    /// The longest `summary`.
    public static let summaryLimit = 300

    private var fullSummary: String {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text
        }
        func at(_ context: Context) -> String {
            let path = path(context.codingPath)
            return path.isEmpty ? "" : path + ": "
        }
        switch self {
        case .keyNotFound(let key, let context):
            return "\(at(context))no key \"\(key.stringValue)\""
        case .valueNotFound(_, let context):
            return "\(at(context))null where a value is required"
        case .typeMismatch(let type, let context):
            return "\(at(context))not a \(type)"
        case .dataCorrupted(let context):
            return "\(at(context))\(context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }
}
