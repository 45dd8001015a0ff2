/// A record as the API must send it: with every key of its shape, `null` where it has no value (docs/api.md
/// section 2.4; the checker's `record-keys`). Everything the engine reads from the server — pages, a GET, a write's answer,
/// a 412's `current` — is decoded through it.
///
/// A key left out is a malformed answer, not a `null`: read as one, a server that leaves out what it did not change
/// (or a key it does not know yet) would clear the replica's copy of that field — and the base copy the next
/// three-way merge starts from — with nothing to say it happened; a PATCH's answer without the field written would
/// read as the server overriding the edit. Refused, nothing of the answer is taken and the error names the keys.
/// Keys the shape does not name are allowed, as the contract says.
///
/// ```swift
/// let order = try JSONDecoder().decode(CompleteRecord<Order>.self, from: body).record
/// ```
public struct CompleteRecord<Record: SyncRecord>: Decodable, Sendable {
    public var record: Record

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Record.CodingKeys.self)
        let missing = Record.CodingKeys.allCases.filter { !container.contains($0) }
        if !missing.isEmpty {
            let id =
                (try? decoder.container(keyedBy: IdentifierKey.self).decode(String.self, forKey: .id).prefix(80)) ?? "?"
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "\(Record.collection) record \(id) leaves out \(missing.map(\.stringValue).joined(separator: ", ")): every key of its shape is sent, null when it has no value (docs/api.md section 2.4)"
                ))
        }
        record = try Record(from: decoder)
    }

    private enum IdentifierKey: String, CodingKey { case id }
}
