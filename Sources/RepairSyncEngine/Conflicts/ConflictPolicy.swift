public import RepairSyncModels

/// How a collection resolves a record changed both locally (pending) and on the server since the base.
public enum ConflictPolicy: String, Sendable, Codable, CaseIterable {
    /// Record level: the server's copy wins; the record's pending local fields are dropped.
    case serverWins = "server-wins"
    /// Record level: the local fields win and are pushed over the server's values.
    case clientWins = "client-wins"
    /// Record level: the side edited last wins, comparing the local edit time with the server's `updated_at`
    /// corrected by the measured clock offset.
    case lastWriteWins = "last-write-wins"
    /// Field level three-way merge: a field changed on one side takes that side; a field changed on both sides
    /// to different values falls back to last-write-wins for that field.
    case merge
    /// Fields changed on both sides wait for a person (keep local, keep remote or per field); fields changed on
    /// one side only merge as with `merge`.
    case manual

    /// Orders and devices merge; clients and tickets take the server's copy. Ticket messages are a union by id and
    /// never conflict.
    public static func defaultPolicy(for collection: SyncCollection) -> ConflictPolicy {
        switch collection {
        case .orders, .devices: .merge
        case .clients, .tickets, .ticketMessages: .serverWins
        }
    }
}
