import Foundation
import GRDB
import RepairSyncModels
import RepairSyncTestSupport
import Testing

@testable import RepairSyncStore

/// The class the store's triggers give an outbox entry (`v10-push-priority-by-join`), checked against the defaults
/// as `PushPriority` states them, and how SQLite computes it.
@Suite struct PushPriorityTriggerTests {
    /// An entry as the engine writes it, and the subjects it is classed by.
    struct Entry {
        var collection: SyncCollection
        var kind: String
        var fields: String
        var subjects: [String]
    }

    static let entries: [Entry] = [
        Entry(collection: .orders, kind: "update", fields: #"{"notes":"n"}"#, subjects: ["notes"]),
        Entry(
            collection: .orders, kind: "update", fields: #"{"notes":"n","status":"ready"}"#,
            subjects: ["notes", "status"]),
        Entry(collection: .devices, kind: "update", fields: #"{"diagnosis":"d"}"#, subjects: ["diagnosis"]),
        Entry(collection: .devices, kind: "update", fields: #"{"colour":"red"}"#, subjects: ["colour"]),
        Entry(collection: .clients, kind: "create", fields: #"{"first_name":"A","status":"x"}"#, subjects: ["create"]),
        Entry(collection: .orders, kind: "create", fields: #"{"status":"booked_in"}"#, subjects: ["create"]),
        Entry(
            collection: .ticketMessages, kind: "create", fields: #"{"content":"c","is_internal":"true"}"#,
            subjects: ["internal"]),
        Entry(
            collection: .ticketMessages, kind: "create", fields: #"{"content":"c","is_internal":"false"}"#,
            subjects: ["public"]),
    ]

    /// The class the defaults give: the most urgent of the entry's subjects, normal when none is named.
    static func expected(_ entry: Entry) -> Int {
        entry.subjects.map { PushPriority.defaultPriority(entry.collection, $0).rawValue }.min() ?? 2
    }

    @Test("an entry is classed by its most urgent subject when written, and again when its fields are rewritten")
    func entriesAreClassed() throws {
        let store = try ReplicaStore.inMemory()
        try store.write { db in
            for (n, entry) in Self.entries.enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO outbox (collection, record_id, order_key, kind, fields, idempotency_key, created_at,
                                            edited_at)
                        VALUES (?, ?, ?, ?, ?, ?, 1, 1)
                        """,
                    arguments: [
                        entry.collection.name, "r\(n)", "\(entry.collection.name):r\(n)", entry.kind, entry.fields,
                        "k\(n)",
                    ])
                let priority = try Int.fetchOne(
                    db, sql: "SELECT priority FROM outbox WHERE seq = ?", arguments: [db.lastInsertedRowID])
                #expect(priority == Self.expected(entry), "\(entry.collection.name) \(entry.kind) \(entry.fields)")
            }
            // A pending note joined by a status change: the entry moves up to critical, and back when it is rewritten.
            let seq = try #require(
                try Int64.fetchOne(db, sql: "SELECT seq FROM outbox WHERE fields = ?", arguments: [#"{"notes":"n"}"#]))
            try db.execute(
                sql: "UPDATE outbox SET fields = ? WHERE seq = ?", arguments: [#"{"notes":"n","status":"x"}"#, seq])
            #expect(try Int.fetchOne(db, sql: "SELECT priority FROM outbox WHERE seq = ?", arguments: [seq]) == 0)
            try db.execute(sql: "UPDATE outbox SET fields = ? WHERE seq = ?", arguments: [#"{"notes":"m"}"#, seq])
            #expect(try Int.fetchOne(db, sql: "SELECT priority FROM outbox WHERE seq = ?", arguments: [seq]) == 2)
        }
    }

    @Test("the class is looked up by primary key, one subject at a time, with no temporary index of the subjects")
    func classIsLookedUpByKey() throws {
        let store = try ReplicaStore.inMemory()
        let plan = try store.read { db in
            try Row.fetchAll(
                db,
                sql: "EXPLAIN QUERY PLAN SELECT \(PushPriorityTable.expression(row: "outbox")) FROM outbox"
            ).map { $0["detail"] as String }
        }
        #expect(
            plan.filter { $0.hasPrefix("SEARCH p USING PRIMARY KEY") }.count == 2, "\(plan.joined(separator: " | "))")
        #expect(
            !plan.contains { $0.contains("LIST SUBQUERY") || $0.contains("TEMP B-TREE") },
            "\(plan.joined(separator: " | "))")
    }
}
