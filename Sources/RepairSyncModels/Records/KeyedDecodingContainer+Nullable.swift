extension KeyedDecodingContainer {
    /// The value at `key`, or nil for an explicit `null` — and a key left out is refused. docs/api.md 2.4: a record
    /// carries every key of its shape, `null` when empty, so that a reader never guesses; and either guess loses
    /// something. Read as a `null`, a key left out by a server that sends only what changed (or that does not know
    /// the key yet) clears the replica's copy of the field and the base copy the next merge starts from, with nothing
    /// to say so, and a PATCH's answer without the field written reads as the server overriding the edit. Read as
    /// "unchanged", a key left out by a server that drops its empty keys (`omitempty`) never clears a field the
    /// server cleared. Refused, the answer is malformed: nothing of a page is taken, a write's answer acknowledges
    /// nothing, and the error says where.
    ///
    /// The `null` is told from the gap only when the value is missing (`contains`, one lookup): a record's decoding
    /// costs what `decodeIfPresent` costs. `String` and `Int` have their own overloads, which reach the
    /// decoder's concrete entry points as the synthesised decoding does (the generic path costs more per field).
    ///
    /// ```swift
    /// notes = try c.decodeNullable(String.self, forKey: .notes)
    /// ```
    public func decodeNullable(_ type: String.Type, forKey key: Key) throws -> String? {
        if let value = try decodeIfPresent(String.self, forKey: key) { return value }
        try requirePresent(key)
        return nil
    }

    public func decodeNullable(_ type: Int.Type, forKey key: Key) throws -> Int? {
        if let value = try decodeIfPresent(Int.self, forKey: key) { return value }
        try requirePresent(key)
        return nil
    }

    public func decodeNullable<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if let value = try decodeIfPresent(T.self, forKey: key) { return value }
        try requirePresent(key)
        return nil
    }

    private func requirePresent(_ key: Key) throws {
        guard !contains(key) else { return }
        throw DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: codingPath + [key],
                debugDescription:
                    "left out: a record carries every key of its shape, null when it has no value (docs/api.md 2.4)"))
    }
}
