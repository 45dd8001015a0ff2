/// One page of a collection's changes feed: `GET /api/v1/{collection}/changes?cursor=C&limit=N`.
///
/// `data` holds records created or changed since the cursor, each once at its latest version, in server commit
/// order; `deleted` holds tombstones. Resume with `nextCursor`; the feed is caught up when `hasMore` is false.
public struct ChangesPage<Record: SyncRecord>: Codable, Sendable {
    public var data: [Record]
    public var deleted: [Tombstone]
    public var nextCursor: String
    public var hasMore: Bool

    public init(data: [Record], deleted: [Tombstone], nextCursor: String, hasMore: Bool) {
        self.data = data
        self.deleted = deleted
        self.nextCursor = nextCursor
        self.hasMore = hasMore
    }

    public enum CodingKeys: String, CodingKey {
        case data, deleted
        case nextCursor = "next_cursor"
        case hasMore = "has_more"
    }

    /// Cursors are opaque: a server may send a bare integer, which is kept as its decimal text and sent back so.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        data = try container.decode([Record].self, forKey: .data)
        deleted = try container.decode([Tombstone].self, forKey: .deleted)
        hasMore = try container.decode(Bool.self, forKey: .hasMore)
        if try !container.contains(.nextCursor) || container.decodeNil(forKey: .nextCursor) {
            throw DecodingError.dataCorruptedError(
                forKey: .nextCursor, in: container, debugDescription: "a page without a next_cursor")
        } else if let text = try? container.decode(String.self, forKey: .nextCursor) {
            nextCursor = text
        } else if let number = try? container.decode(Int64.self, forKey: .nextCursor) {
            nextCursor = String(number)
        } else if let number = try? container.decode(UInt64.self, forKey: .nextCursor) {
            // An unsigned 64-bit sequence past Int64's range: refused, every page of the feed would be.
            nextCursor = String(number)
        } else {
            throw DecodingError.dataCorruptedError(
                forKey: .nextCursor, in: container,
                debugDescription: "next_cursor is neither a string nor a whole number of at most 64 bits")
        }
        // "An id appears at most once per page, in `data` or in `deleted`" (docs/api.md 4.2). A page that breaks it
        // is malformed: which of two copies is the record, or whether it is deleted, the page does not say — written
        // in page order, an older copy could win and no feed would bring the newer one again.
        var seen = Set<String>()
        for id in data.map(\.id) + deleted.map(\.id) where !seen.insert(id).inserted {
            throw DecodingError.dataCorruptedError(
                forKey: .data, in: container, debugDescription: "\(id) appears twice in one page")
        }
    }

    /// Entries in the page (records and tombstones).
    public var count: Int { data.count + deleted.count }

    /// What the page delivers — each record's id and version, each tombstone's id — hashed, in order: a feed that
    /// hands out the same entries again under a new cursor text (a cursor with a nonce or a time in it, its position
    /// unchanged) is not advancing, however its cursors differ.
    public var entriesFingerprint: Int {
        var hasher = Hasher()
        for record in data {
            hasher.combine(record.id)
            hasher.combine(record.version)
        }
        hasher.combine(-1)
        for tombstone in deleted {
            hasher.combine(tombstone.id)
            hasher.combine(tombstone.deletedAt)
        }
        return hasher.finalize()
    }
}

/// A record deleted on the server.
public struct Tombstone: Codable, Hashable, Sendable {
    public var id: String
    public var deletedAt: Timestamp

    public init(id: String, deletedAt: Timestamp) {
        self.id = id
        self.deletedAt = deletedAt
    }

    public enum CodingKeys: String, CodingKey {
        case id
        case deletedAt = "deleted_at"
    }
}
