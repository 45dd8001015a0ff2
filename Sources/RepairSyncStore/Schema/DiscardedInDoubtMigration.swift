internal import GRDB

/// `v7-discarded-in-doubt`: `sync_bases.in_doubt`, the values of changes that were discarded while in doubt (sent,
/// the answer never known) — JSON `{field: [value, …]}`. Such a change may have been applied: until the next server
/// copy of the record replaces the base, a remote value equal to one of them is this workstation's own write, not
/// another user's edit. Cleared whenever the base is written again.
enum DiscardedInDoubtMigration {
    static func migrate(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE sync_bases ADD COLUMN in_doubt TEXT")
    }
}
