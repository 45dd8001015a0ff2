internal import GRDB
internal import RepairSyncStore

/// The simulator's own reading of the outbox table, written from docs/architecture.md rather than from the engine's
/// queries (the two must be able to disagree).
enum SimOutbox {
    private struct Entry: Sendable {
        var seq: Int64, orderKey: String, recordId: String, isCreate: Bool, live: Bool, dependsOn: String?
    }

    /// The changes a scheduler must come back for: entries still to be sent (pending, failed or in flight) that head
    /// their record's order and wait for nothing that needs a person. An entry behind another live entry of its
    /// record is left out (the one ahead stands for it); so is one whose create — its record's own or its parent's —
    /// is dead or held (it goes, or dies, with that create). Whether each is due now or at its retry time does not
    /// matter here: either way the run must say when the next one is due, or nothing brings it before the next
    /// periodic run (2670e28: a retry time cleared by a rebase was reported as "nothing waits").
    static func waiting(_ store: ReplicaStore) -> [Int64] {
        let entries =
            (try? store.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT seq, order_key, record_id, kind, state, depends_on FROM outbox ORDER BY seq"
                ).map { row in
                    Entry(
                        seq: row["seq"], orderKey: row["order_key"], recordId: row["record_id"],
                        isCreate: row["kind"] == "create",
                        live: ["pending", "failed", "in_flight"].contains(row["state"] as String),
                        dependsOn: row["depends_on"])
                }
            }) ?? []
        var headed = Set<String>()
        var waiting: [Int64] = []
        for entry in entries where entry.live {
            defer { headed.insert(entry.orderKey) }
            guard !headed.contains(entry.orderKey) else { continue }
            let ownCreateStuck = entries.contains {
                $0.seq < entry.seq && $0.orderKey == entry.orderKey && $0.recordId == entry.recordId && $0.isCreate
                    && !$0.live
            }
            let parentCreateStuck =
                entry.dependsOn.map { parent in
                    entries.contains { $0.orderKey == parent && $0.isCreate && !$0.live }
                } ?? false
            if !ownCreateStuck && !parentCreateStuck { waiting.append(entry.seq) }
        }
        return waiting
    }
}
